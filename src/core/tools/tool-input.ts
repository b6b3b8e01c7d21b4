import { plainToInstance } from '../util/class-transformer.js';
import { validate, type ValidationError } from '../util/class-validator.js';
import { AgentRxError } from '../errors.js';
import type { InputType, StandardSchemaIssue, StandardSchemaV1, ToolHandler } from '../plugin/tool-handler.js';
import { messageOf } from '../util/async.js';
import { dtoJsonSchema } from './dto-json-schema.js';
import { compileJsonSchema } from './json-schema-input.js';
import { describeUnresolvedRefs, unresolvedRefs } from './unresolved-refs.js';

/** How a handler declares its input: `class` (a DTO), `json-schema` or `standard-schema`. */
export type ToolInputKind = 'class' | 'json-schema' | 'standard-schema';

/** The outcome of validating one input. */
export type InputCheck = { readonly ok: true; readonly value: object } | { readonly ok: false; readonly problems: readonly string[] };

/** A handler's input, compiled once: its JSON Schema for the host and its validator. */
export interface CompiledToolInput {
  readonly kind: ToolInputKind;
  /** JSON Schema (an object schema) sent to the host. */
  readonly schema: Record<string, unknown>;
  /**
   * Validates one decoded input (already checked for depth). Never throws: a validator that
   * throws is reported as a problem. The `value` is what the handler gets (a DTO instance, the
   * input itself, or the Standard Schema's output).
   */
  check(input: Readonly<Record<string, unknown>>): Promise<InputCheck>;
}

/** Compiled inputs, per handler instance (a handler's input declaration does not change). */
const compiled = new WeakMap<ToolHandler, CompiledToolInput>();

/**
 * The compiled input of `handler`, built on first use and kept. Throws `invalid_config` naming
 * the tool when the declaration is unusable: both or neither of `inputType`/`inputSchema`, a JSON
 * Schema Ajv refuses or that is not an object schema, a Standard Schema without a JSON Schema
 * converter, a schema with a `$ref` that does not resolve inside it (the host is sent the schema
 * alone), a DTO with a `@ValidateNested()` property lacking `@Type`. (A DTO's decorator metadata
 * is checked by the facade: `checkDecoratorMetadata`.)
 */
export function compileToolInput(handler: ToolHandler): CompiledToolInput {
  let c = compiled.get(handler);
  if (!c) {
    c = build(handler);
    compiled.set(handler, c);
  }
  return c;
}

/** The kind of a handler's input declaration (without compiling it). */
export function inputKindOf(handler: ToolHandler): ToolInputKind {
  if (handler.inputType) return 'class';
  return isStandardSchema(handler.inputSchema) ? 'standard-schema' : 'json-schema';
}

/** True when `v` implements the Standard Schema `~standard` interface. */
export function isStandardSchema(v: unknown): v is StandardSchemaV1 {
  const std = (v as StandardSchemaV1 | undefined)?.['~standard'];
  return typeof v === 'object' && v !== null && typeof std === 'object' && std !== null && typeof std.validate === 'function';
}

function build(handler: ToolHandler): CompiledToolInput {
  return compileDeclaration(handler, `tool '${String(handler.name)}'`, 'invalid_config', { tool: handler.name });
}

/**
 * Compiles an object declaration: a DTO class (`inputType`), a JSON Schema or a Standard Schema
 * (`inputSchema`). A tool's input, or a session's `outputSchema`. Failures throw `code` naming `owner`.
 */
export function compileDeclaration(
  handler: Pick<ToolHandler, 'inputType' | 'inputSchema'>,
  owner: string,
  code: 'invalid_config' | 'invalid_options',
  details: Record<string, unknown> = {},
): CompiledToolInput {
  const fail = (what: string): never => {
    throw new AgentRxError(code, `${owner}: ${what}`, details);
  };
  if (handler.inputType && handler.inputSchema !== undefined) fail('declares both inputType and inputSchema; keep one');
  if (handler.inputType) {
    if (typeof handler.inputType !== 'function') fail('inputType must be a class (a class-validator DTO)');
    let schema: Record<string, unknown>;
    try {
      schema = dtoJsonSchema(handler.inputType);
    } catch (e) {
      return fail(messageOf(e));
    }
    return dtoInput(handler.inputType, schema);
  }
  const schema = handler.inputSchema;
  if (schema === undefined || schema === null)
    fail('declares no input; give it inputType (a class-validator DTO) or inputSchema (JSON Schema or a Standard Schema such as zod)');
  if (isStandardSchema(schema)) return standardInput(schema, fail);
  try {
    const json = compileJsonSchema(schema as Record<string, unknown>);
    return {
      kind: 'json-schema',
      schema: json.hostSchema,
      check: (input) => {
        const problems = json.problems(input);
        return Promise.resolve(problems.length === 0 ? { ok: true, value: input } : { ok: false, problems });
      },
    };
  } catch (e) {
    return fail(messageOf(e));
  }
}

function dtoInput(type: InputType, schema: Record<string, unknown>): CompiledToolInput {
  return {
    kind: 'class',
    schema,
    check: async (input) => {
      const value = plainToInstance(type, input) as object;
      const problems = await validate(value, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false });
      return problems.length > 0 ? { ok: false, problems: describeValidation(problems) } : { ok: true, value };
    },
  };
}

function standardInput(schema: StandardSchemaV1, fail: (what: string) => never): CompiledToolInput {
  const std = schema['~standard'];
  const vendor = typeof std.vendor === 'string' ? std.vendor : 'unknown';
  if (typeof std.jsonSchema?.input !== 'function') {
    fail(
      `its Standard Schema (vendor '${vendor}') has no JSON Schema converter (~standard.jsonSchema), so the host cannot be told its input; ` +
        'use a library version that implements Standard JSON Schema (zod ≥ 4.2), or pass the JSON Schema as inputSchema instead',
    );
  }
  let json: Record<string, unknown>;
  try {
    json = std.jsonSchema!.input({ target: 'draft-07' });
  } catch (e) {
    return fail(`its Standard Schema (vendor '${vendor}') could not be converted to JSON Schema: ${messageOf(e)}`);
  }
  if (typeof json !== 'object' || json === null || (json.type !== undefined && json.type !== 'object')) {
    fail(`its Standard Schema (vendor '${vendor}') must describe an object; its JSON Schema has type ${JSON.stringify(json?.type)}`);
  }
  const { $schema: _dialect, ...rest } = json;
  const hostSchema = { type: 'object', ...rest };
  const broken = unresolvedRefs(hostSchema);
  if (broken.length > 0) {
    fail(
      `its Standard Schema (vendor '${vendor}') converts to a JSON Schema with a $ref that does not resolve inside it: ${describeUnresolvedRefs(broken)}; ` +
        'the host gets only this schema and fetches nothing, so define what the $ref points at within the same schema (zod: no raw "$ref" in .meta()), ' +
        'or pass a self-contained JSON Schema as inputSchema',
    );
  }
  return {
    kind: 'standard-schema',
    schema: hostSchema,
    check: async (input) => {
      const result = await std.validate(input);
      if (!result.issues) return { ok: true, value: (result.value ?? {}) as object };
      return { ok: false, problems: result.issues.map(describeIssue) };
    },
  };
}

function describeIssue(issue: StandardSchemaIssue): string {
  const path = (issue.path ?? []).map((p) => String(typeof p === 'object' && p !== null ? p.key : p)).join('.');
  return `${path || '(input)'}: ${issue.message}`;
}

function describeValidation(errors: readonly ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => (m.startsWith(e.property) ? `${path}${m.slice(e.property.length)}` : `${path}: ${m}`));
    return [...own, ...describeValidation(e.children ?? [], path)];
  });
}
