import type { ToolCallResultEvent } from './agui-event.js';

/**
 * A tool call's result as consumers' `onToolResult` receives it: the value the tool returned, its
 * text, and how it came about. Built from a TOOL_CALL_RESULT and the agentrx event riding in its
 * `rawEvent` (`agentrx.tool_result` for a local tool, `agentrx.host_tool_result` for a host-run
 * one); a TOOL_CALL_RESULT from elsewhere gives its text, not an error, not host-run, not replayed.
 */
export interface ToolCallResult {
  /**
   * What the tool returned: the parsed JSON value when `content` is the JSON text of a value the
   * tool returned (`ToolResult.json`), else the text itself (an error, a host-run tool's text, a
   * tool that returned a string). Parsed on first read, once per consumer; each consumer gets its
   * own copy.
   */
  readonly value: unknown;
  /** The result text, as the model reads it. */
  readonly content: string;
  /** The tool failed (or was refused): `content` says why. */
  readonly isError: boolean;
  /** The host ran the tool itself (a server tool, an MCP tool run by the host); agentrx did not. */
  readonly hostRun: boolean;
  /** The result was taken from the tool ledger (a redrive after a reconnect or a restart), not run again. */
  readonly replayed: boolean;
}

/** The {@link ToolCallResult} of a TOOL_CALL_RESULT event; `value` is computed lazily. Never throws. */
export function toolCallResultOf(ev: ToolCallResultEvent): ToolCallResult {
  const content = typeof ev.content === 'string' ? ev.content : String(ev.content);
  try {
    return fromRawEvent(content, ev.rawEvent);
  } catch {
    // A hand-built rawEvent with a throwing getter: the text alone.
    return lazyResult(content, false, { isError: false, hostRun: false, replayed: false });
  }
}

function fromRawEvent(content: string, rawEvent: unknown): ToolCallResult {
  const raw = record(rawEvent);
  const type = raw?.['type'];
  const result = record(raw?.['result']);
  const isError = result?.['isError'] === true;
  if (type === 'agentrx.host_tool_result') return lazyResult(content, false, { isError, hostRun: true, replayed: false });
  if (type === 'agentrx.tool_result') return lazyResult(content, result?.['json'] === true, { isError, hostRun: false, replayed: raw?.['replayed'] === true });
  return lazyResult(content, false, { isError: false, hostRun: false, replayed: false });
}

type Flags = Pick<ToolCallResult, 'isError' | 'hostRun' | 'replayed'>;

/** A result whose `value` is parsed from `content` on first read when `json` is set (a parse failure gives the text). */
function lazyResult(content: string, json: boolean, flags: Flags): ToolCallResult {
  if (!json) return { value: content, content, ...flags };
  let parsed: { value: unknown } | undefined;
  return {
    get value(): unknown {
      parsed ??= { value: parseOr(content) };
      return parsed.value;
    },
    content,
    ...flags,
  };
}

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function record(v: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof v === 'object' && v !== null ? (v as Readonly<Record<string, unknown>>) : undefined;
}
