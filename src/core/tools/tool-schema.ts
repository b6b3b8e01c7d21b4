import type { ToolDeclaration } from '../model.js';
import type { ToolHandler } from '../plugin/tool-handler.js';
import { compileToolInput } from './tool-input.js';

/**
 * JSON Schema (an object schema) of a handler's input, as the host is sent it: generated from
 * the DTO's class-validator decorators (`inputType`; nested classes inlined, recursive ones under
 * `$defs`: see `dtoJsonSchema`), the `inputSchema` JSON Schema (closed when it says nothing about
 * extra fields), or a Standard Schema's own converter (draft-07). Self-contained: every `$ref`
 * resolves inside it. Throws `invalid_config` naming the tool when its input declaration is
 * unusable (see `compileToolInput`).
 */
export function inputSchemaOf(handler: ToolHandler): Record<string, unknown> {
  return compileToolInput(handler).schema;
}

/** Declarations already built, per handler instance (handlers are singletons; their DTO does not change). */
const declarations = new WeakMap<ToolHandler, ToolDeclaration>();

/**
 * What the host sees of a tool. Built once per handler: generating the schema walks the DTO's
 * decorator metadata, which showed in the profile of many sessions starting at once. The result
 * is frozen (shared by every session's spec).
 */
export function declarationOf(handler: ToolHandler): ToolDeclaration {
  let d = declarations.get(handler);
  if (!d || d.name !== handler.name || d.description !== handler.description) {
    d = deepFreeze({ name: handler.name, description: handler.description, inputSchema: inputSchemaOf(handler) });
    declarations.set(handler, d);
  }
  return d;
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const child of Object.values(v)) deepFreeze(child);
  }
  return v;
}
