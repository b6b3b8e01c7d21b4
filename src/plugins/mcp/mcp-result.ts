import type { ToolOutcome } from '../../core/plugin/tool-handler.js';
import { jsonText } from '../../core/util/json-depth.js';

/** The parts of an MCP `tools/call` result that are read (the SDK's `CallToolResult`). */
export interface McpCallResult {
  readonly content?: readonly McpContent[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  readonly toolResult?: unknown;
}

/** One content block of a result; only `type` is relied on. */
export type McpContent = { readonly type: string } & Readonly<Record<string, unknown>>;

/**
 * The tool result the model reads, from an MCP result. Tool results are text today, so: text
 * blocks are kept as they are; an image or audio block becomes a short description
 * (`[image: image/png, 12 KB]`); a resource link its URI; an embedded resource its text, or a
 * description when it is binary; `structuredContent` its JSON text when no text block carries
 * it. Blocks are joined by blank lines. `isError` stays an error. A text longer than `maxChars`
 * is cut there, with a note saying how much was left out.
 */
export function toToolOutcome(result: McpCallResult, maxChars: number): ToolOutcome {
  const parts: string[] = [];
  const content = Array.isArray(result.content) ? result.content : [];
  for (const block of content) parts.push(describeBlock(block));
  const hasText = content.some((b) => b.type === 'text');
  if (result.structuredContent !== undefined && result.structuredContent !== null && !hasText) parts.push(jsonText(result.structuredContent));
  // Legacy (protocol 2024-10-07) results carry `toolResult` instead of content.
  if (parts.length === 0 && result.toolResult !== undefined)
    parts.push(typeof result.toolResult === 'string' ? result.toolResult : jsonText(result.toolResult));
  let text = parts.join('\n\n');
  if (text.length > maxChars) {
    text = `${text.slice(0, maxChars)}\n[truncated: ${text.length - maxChars} more characters; the result is over the ${maxChars}-character cap (mcp.servers.<name>.maxResultChars)]`;
  }
  return { content: text, isError: result.isError === true };
}

function describeBlock(block: McpContent): string {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'image':
    case 'audio':
      return `[${block.type}: ${str(block.mimeType, 'unknown type')}, ${sizeOfBase64(block.data)}]`;
    case 'resource_link':
      return `[resource: ${str(block.uri, '?')}${typeof block.name === 'string' ? ` (${block.name})` : ''}]`;
    case 'resource': {
      const r = (block.resource ?? {}) as Record<string, unknown>;
      if (typeof r.text === 'string') return r.text;
      return `[resource: ${str(r.uri, '?')}, ${str(r.mimeType, 'unknown type')}, ${sizeOfBase64(r.blob)}]`;
    }
    default:
      return `[${block.type} content]`;
  }
}

function str(v: unknown, fallback: string): string {
  return typeof v === 'string' && v.length > 0 ? v : fallback;
}

/** The decoded size of base64 `data`, as `12 KB` (at least `1 KB` when not empty) or `0 KB`. */
function sizeOfBase64(data: unknown): string {
  if (typeof data !== 'string') return '0 KB';
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  const bytes = Math.max(0, Math.floor((data.length * 3) / 4) - padding);
  if (bytes === 0) return '0 KB';
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}
