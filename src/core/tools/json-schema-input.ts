import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { Ajv2019 } from 'ajv/dist/2019.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { JsonSchema } from '../plugin/tool-handler.js';
import { linearRegExp } from './linear-regexp.js';
import { describeUnresolvedRefs, unresolvedRefs } from './unresolved-refs.js';

/** Keywords by which a root object schema says what it does with fields it does not list. */
const OPENNESS_KEYWORDS = ['additionalProperties', 'patternProperties', 'unevaluatedProperties', 'allOf', 'anyOf', 'oneOf', '$ref'];

/** A compiled JSON Schema: what the host is sent, and the validator. */
export interface CompiledJsonSchema {
  /** The schema as sent to the host: closed when it said nothing about extra fields, without `$schema`. */
  readonly hostSchema: Record<string, unknown>;
  /** Problems of `value` (`path: what`), empty when valid. */
  problems(value: unknown): string[];
}

/** The JSON Schema dialects Ajv implements, each in its own module. */
type Dialect = 'draft7' | 'draft2019' | 'draft2020';
type AnyAjv = Ajv | Ajv2019 | Ajv2020;

// One Ajv per dialect, shared: compiling is the expensive part and is done once per handler.
const ajvs: Partial<Record<Dialect, AnyAjv>> = {};

/**
 * The Ajv of `dialect`, loaded and built at the first tool that uses it instead of at import
 * (Ajv is about a hundred modules and each instance compiles its meta-schema, which an instance
 * whose tools are all DTOs never needs). Synchronous, like its callers: Ajv is CommonJS.
 */
function ajvOf(dialect: Dialect): AnyAjv {
  const existing = ajvs[dialect];
  if (existing) return existing;
  // `logger: false`: an unknown `format` is ignored silently instead of warning on stderr;
  // `strict: false`: vendor keywords (`x-…`, `title` in odd places) are allowed.
  // `code.regExp`: patterns run on a linear-time engine (see linearRegExp).
  const opts = { allErrors: true, strict: false, logger: false as const, validateSchema: true, code: { regExp: linearRegExp } };
  const require = createRequire(import.meta.url);
  let made: AnyAjv;
  if (dialect === 'draft2020') made = new (require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020(opts);
  else if (dialect === 'draft2019') made = new (require('ajv/dist/2019.js') as { Ajv2019: typeof Ajv2019 }).Ajv2019(opts);
  else made = new (require('ajv') as { Ajv: typeof Ajv }).Ajv(opts);
  ajvs[dialect] = made;
  return made;
}

function ajvFor(schema: JsonSchema): AnyAjv {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (dialect.includes('2020-12')) return ajvOf('draft2020');
  if (dialect.includes('2019-09')) return ajvOf('draft2019');
  return ajvOf('draft7');
}

/**
 * Compiles a tool's input JSON Schema once. Throws an Error saying what is wrong when the schema
 * is not an object schema, has a `$ref` that does not resolve inside it (see `unresolvedRefs`),
 * or Ajv refuses it (an invalid schema): the caller names the tool.
 */
export function compileJsonSchema(schema: JsonSchema): CompiledJsonSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error('the input schema must be a JSON Schema object');
  if (schema.type !== undefined && schema.type !== 'object') {
    throw new Error(`the input schema must describe an object (type "object"); got type ${JSON.stringify(schema.type)}`);
  }
  const closed: Record<string, unknown> = { type: 'object', ...schema };
  if (closed.properties !== undefined && !OPENNESS_KEYWORDS.some((k) => k in closed)) closed.additionalProperties = false;
  // Checked before Ajv, which may resolve a $ref the host cannot: a meta-schema Ajv knows, or a
  // nested `$id` another tool's schema registered in the shared instance.
  const broken = unresolvedRefs(withoutKey(closed, '$schema'));
  if (broken.length > 0) {
    throw new Error(
      `its input JSON Schema has a $ref that does not resolve inside it: ${describeUnresolvedRefs(broken)}; ` +
        'the host gets only this schema and fetches nothing, so put what it points at under "definitions" (or "$defs") of this schema ' +
        'and refer to it as "#/definitions/<name>", or write it inline',
    );
  }
  const ajv = ajvFor(closed);
  // A dialect Ajv does not know (draft-04, a vendor URL) is compiled as draft-07 without it.
  const known = typeof closed.$schema !== 'string' || /draft-07|2019-09|2020-12/.test(closed.$schema);
  const forAjv = known ? closed : withoutKey(closed, '$schema');
  let validate: ValidateFunction;
  try {
    // `$id`s would collide in the shared instance between two tools using the same one.
    validate = ajv.compile(withoutKey(forAjv, '$id'));
  } catch (e) {
    throw new Error(`invalid input JSON Schema: ${e instanceof Error ? e.message : String(e)}`);
  }
  return {
    hostSchema: withoutKey(closed, '$schema'),
    problems: (value) => (validate(value) ? [] : describeAjvErrors(validate.errors ?? [])),
  };
}

/** `field.path: what is wrong`, one per Ajv error; naming the field for required/extra ones. */
export function describeAjvErrors(errors: readonly ErrorObject[]): string[] {
  const out = errors.map((e) => {
    const base = e.instancePath.split('/').slice(1).map(unescapePointer).join('.');
    const join = (key: string): string => (base ? `${base}.${key}` : key);
    const params = e.params as Record<string, unknown>;
    if (e.keyword === 'required') return `${join(String(params.missingProperty))}: is required`;
    if (e.keyword === 'additionalProperties') return `${join(String(params.additionalProperty))}: is not allowed (unknown field)`;
    if (e.keyword === 'unevaluatedProperties') return `${join(String(params.unevaluatedProperty))}: is not allowed (unknown field)`;
    return `${base || '(input)'}: ${e.message ?? e.keyword}`;
  });
  return [...new Set(out)];
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

function withoutKey(o: Record<string, unknown>, key: string): Record<string, unknown> {
  if (!(key in o)) return o;
  const { [key]: _dropped, ...rest } = o;
  return rest;
}
