import type { ToolHandler } from './tool-handler.js';

/**
 * Extension point for tools that appear at run time (an MCP server's tools): a source owns a set
 * of ToolHandlers that may change while the instance runs. Bound under `ToolSource` (one
 * singleton per source, `bindPlugin`); the ToolRegistry merges every source's current tools with
 * the statically bound `ToolHandler`s, and the dispatcher looks tools up there at call time.
 */
export const ToolSource = Symbol('ToolSource');

/** Returned by `onDidChangeTools`; `dispose()` removes the listener. */
export interface ToolSourceSubscription {
  dispose(): void;
}

/**
 * A dynamic set of tools. Its `start`/`stop` run in the kernel's tools phase, bounded by
 * `timeouts.toolsPhaseMs` (its `start` by its own `startTimeoutMs` when that is longer).
 */
export interface ToolSource {
  /** Stable kebab-case id, shown in logs and errors (`mcp`). */
  readonly id: string;
  /**
   * How long `start` may take, in ms, when that can be longer than `timeouts.toolsPhaseMs` (the
   * MCP source: its servers' longest `startTimeoutMs`, plus time to stop them again). The kernel
   * then bounds `start` by this instead; a source that bounds its own start-up declares more than
   * that bound, so that its own error (naming what did not start) comes out first.
   */
  readonly startTimeoutMs?: number;
  /**
   * Connects and loads the initial tool list. May be async. A throw (or rejection) fails the
   * instance's start-up: `AgentRx.create` rejects with that error after stopping what started.
   */
  start?(): Promise<void> | void;
  /** Releases everything (child processes, connections). May be async; called at most once. */
  stop?(): Promise<void> | void;
  /**
   * The tools offered now. Called whenever a session starts and whenever a tool is looked up:
   * keep it cheap (return a kept array). Names must be unique across every source and the
   * static tools; the registry leaves out (and logs) a tool whose name is taken.
   */
  tools(): readonly ToolHandler[];
  /**
   * Registers `listener`, called (synchronously, without arguments) after `tools()` changed. A
   * listener that throws is logged by the registry and does not affect the source.
   */
  onDidChangeTools(listener: () => void): ToolSourceSubscription;
}
