import { configError, type ConfigIssue } from '../config/config-issue.js';
import { AgentRxError } from '../errors.js';
import type { Participant } from '../kernel/kernel.js';
import { PluginRegistry } from '../kernel/plugin-registry.js';
import type { Logger } from '../logger.js';
import type { ToolHandler } from '../plugin/tool-handler.js';
import type { ToolSource, ToolSourceSubscription } from '../plugin/tool-source.js';
import { messageOf } from '../util/async.js';
import { compileToolInput, inputKindOf } from './tool-input.js';

/** What the dispatcher needs of the tools: a lookup at call time. */
export interface ToolLookup {
  /** The tool named `name` now, or undefined. */
  get(name: string): ToolHandler | undefined;
  /** The names of the tools offered now. */
  readonly ids: string[];
}

/**
 * The tools of one AgentRx instance (the `ToolRegistry` token): the statically bound
 * `ToolHandler`s (a snapshot, as before) merged with the current tools of every `ToolSource`.
 * `all`/`ids`/`get` always answer with the current list, so a session's spec (built when the
 * session starts) and the dispatcher (at each call) see tools that appeared or went.
 *
 * A duplicate among the static tools is a `duplicate_plugin` error and an unusable input
 * declaration an `invalid_config` error, both when the registry is built. A source's tool whose
 * name is taken is an `invalid_config` error (naming both) when the source starts, and is left
 * out (and logged) when it appears later.
 */
export class ToolRegistryImpl implements ToolLookup {
  /** Extension-point name, as in PluginRegistry. */
  readonly point = 'tool';
  private readonly statics: ReadonlyMap<string, ToolHandler>;
  private current: ReadonlyMap<string, ToolHandler>;
  private readonly listeners = new Set<() => void>();
  private readonly started = new Set<ToolSource>();
  private failure: unknown;

  /**
   * @param handlers the statically bound tools (classes and `defineTool` objects).
   * @param sources the tool sources; subscribed to at once, started by the kernel (`participants`).
   */
  constructor(
    handlers: readonly ToolHandler[],
    private readonly sources: readonly ToolSource[] = [],
    private readonly logger?: Logger,
  ) {
    const registry = new PluginRegistry<ToolHandler>('tool', handlers, (t) => t.name, logger);
    for (const h of registry.all) compileToolInput(h);
    this.statics = new Map(registry.all.map((h) => [h.name, h]));
    this.current = this.statics;
    // Held for the registry's lifetime (the instance's): a source outlives no registry.
    for (const s of sources) s.onDidChangeTools(() => this.rebuild());
  }

  get(id: string): ToolHandler | undefined {
    return this.current.get(id);
  }

  /** The tool named `id`, or an `unknown_plugin` error listing the current tools. */
  require(id: string): ToolHandler {
    const t = this.current.get(id);
    if (!t) throw new AgentRxError('unknown_plugin', `no tool named '${id}'; known: ${this.ids.join(', ') || '(none)'}`, { point: this.point, id });
    return t;
  }

  get ids(): string[] {
    return [...this.current.keys()];
  }

  get all(): ToolHandler[] {
    return [...this.current.values()];
  }

  /** The sources, as bound. */
  get toolSources(): readonly ToolSource[] {
    return this.sources;
  }

  /**
   * The tools phase of the kernel: the static tools (their optional `start`/`stop`), then each
   * source wrapped so that its start failure, or a name collision among its tools, is kept for
   * `startFailure` (the kernel only logs hook failures).
   */
  get participants(): Participant[] {
    const wrapped = this.sources.map((s): Participant => ({
      id: `tool-source:${s.id}`,
      // The source's own start budget (an MCP source's longest server start-up), if it has one.
      ...(s.startTimeoutMs !== undefined ? { startTimeoutMs: s.startTimeoutMs } : {}),
      start: async () => {
        try {
          await s.start?.();
          this.started.add(s);
          const issues = this.collisionsOf(s);
          if (issues.length > 0) throw configError(issues, undefined);
          this.rebuild();
        } catch (e) {
          this.failure ??= e;
          throw e;
        }
      },
      stop: () => s.stop?.(),
    }));
    return [...this.statics.values(), ...wrapped];
  }

  /**
   * After the kernel's tools phase: the first source start-up failure (its own error, or the
   * `invalid_config` listing its name collisions), or an error naming a source whose start did
   * not finish (it overran `timeouts.toolsPhaseMs`). Undefined when every source started.
   */
  get startFailure(): unknown {
    if (this.failure !== undefined) return this.failure;
    const unstarted = this.sources.filter((s) => !this.started.has(s));
    if (unstarted.length === 0) return undefined;
    return new AgentRxError(
      'timeout',
      `tool source${unstarted.length === 1 ? '' : 's'} ${unstarted.map((s) => `'${s.id}'`).join(', ')} did not finish starting within timeouts.toolsPhaseMs; raise it or the source's own start timeout`,
      { sources: unstarted.map((s) => s.id) },
    );
  }

  /** Registers `listener`, called after the current tool list changed. Returns the disposer. */
  onDidChangeTools(listener: () => void): ToolSourceSubscription {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** One issue per tool of `source` whose name a static tool or another source's tool has. */
  private collisionsOf(source: ToolSource): ConfigIssue[] {
    const taken = new Map(this.statics);
    for (const other of this.sources)
      if (other !== source && this.started.has(other)) for (const t of other.tools()) if (!taken.has(t.name)) taken.set(t.name, t);
    return source
      .tools()
      .filter((t) => taken.has(t.name))
      .map((t) => ({
        path: `tools.${t.name}`,
        message: `tool name '${t.name}' of ${describe(t)} collides with ${describe(taken.get(t.name)!)}`,
        value: t.name,
        expected: 'a unique tool name: rename the server or the other tool, or deny one of them',
      }));
  }

  /** Recomputes the current list from the static tools and every started source's tools. */
  private rebuild(): void {
    const merged = new Map(this.statics);
    for (const s of this.sources) {
      if (!this.started.has(s)) continue;
      let tools: readonly ToolHandler[];
      try {
        tools = s.tools();
      } catch (e) {
        this.logger?.error(`tool source '${s.id}': listing its tools failed`, { error: messageOf(e) });
        continue;
      }
      for (const t of tools) {
        const prev = merged.get(t.name);
        if (prev && prev !== t) {
          this.logger?.warn(`tool '${t.name}' of ${describe(t)} is left out: ${describe(prev)} has the same name`);
          continue;
        }
        try {
          compileToolInput(t);
        } catch (e) {
          this.logger?.warn(`tool '${t.name}' of ${describe(t)} is left out: ${messageOf(e)}`);
          continue;
        }
        merged.set(t.name, t);
      }
    }
    this.current = merged;
    for (const l of this.listeners) {
      try {
        l();
      } catch (e) {
        this.logger?.error('a tool-list listener failed', { error: messageOf(e) });
      }
    }
  }
}

/** `mcp:files tool 'files__read'`, `class ReadFileToolHandler`, `schema tool 'lookup'`. */
function describe(t: ToolHandler): string {
  if (t.source) return `${t.source} tool '${t.name}'`;
  if (inputKindOf(t) === 'class') return `class ${t.constructor?.name ?? 'anonymous'}`;
  return `schema tool '${t.name}'`;
}
