import { targetConstructorToSchema } from 'class-validator-jsonschema';
import type { ToolDeclaration } from '../model.js';
import type { ToolHandler } from '../plugin/tool-handler.js';

/**
 * JSON Schema (draft-07 object schema) of a handler's input DTO, generated from its
 * class-validator decorators. Nested DTOs are inlined by class-validator-jsonschema's `$ref`s
 * being resolved against the same generation run.
 */
export function inputSchemaOf(handler: ToolHandler): Record<string, unknown> {
  const schema = targetConstructorToSchema(handler.inputType, { refPointerPrefix: '#/definitions/' }) as Record<string, unknown>;
  return { type: 'object', properties: {}, ...schema };
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
