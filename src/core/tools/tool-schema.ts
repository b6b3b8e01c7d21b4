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

/** What the host sees of a tool. */
export function declarationOf(handler: ToolHandler): ToolDeclaration {
  return { name: handler.name, description: handler.description, inputSchema: inputSchemaOf(handler) };
}
