/**
 * A tool call's result as consumers' `onToolResult` receives it: the value the tool returned, its
 * text, and how it came about. Built from the typed result event (`agentrx.tool_result` for a
 * local tool, `agentrx.host_tool_result` for a host-run one) by the consumer hub.
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
