import { AgentRxError } from '../errors.js';
import type { Logger } from '../logger.js';

/**
 * A snapshot of the plugins bound under one extension point, keyed by their stable id (tools:
 * their name). Taken once; a duplicate id is a clear error naming both classes.
 */
export class PluginRegistry<T extends object> {
  private readonly byId = new Map<string, T>();

  constructor(
    readonly point: string,
    plugins: readonly T[],
    keyOf: (p: T) => string,
    logger?: Logger,
  ) {
    for (const p of plugins) {
      const id = keyOf(p);
      if (typeof id !== 'string' || id.length === 0) {
        throw new AgentRxError('invalid_config', `${point} plugin ${className(p)} has no id; give it a stable kebab-case \`id\``);
      }
      const prev = this.byId.get(id);
      if (prev && prev !== p) {
        throw new AgentRxError(
          'duplicate_plugin',
          `two ${point} plugins share the id '${id}': ${className(prev)} and ${className(p)}; rename one or unbind the other`,
          { point, id },
        );
      }
      this.byId.set(id, p);
    }
    logger?.debug(`loaded ${point} plugins`, { ids: [...this.byId.keys()] });
  }

  get(id: string): T | undefined {
    return this.byId.get(id);
  }

  /** The plugin with this id, or an `unknown_plugin` error listing the known ids. */
  require(id: string): T {
    const p = this.byId.get(id);
    if (!p) {
      throw new AgentRxError('unknown_plugin', `no ${this.point} plugin with id '${id}'; known: ${this.ids.join(', ') || '(none)'}`, { point: this.point, id });
    }
    return p;
  }

  get ids(): string[] {
    return [...this.byId.keys()];
  }

  get all(): T[] {
    return [...this.byId.values()];
  }
}

function className(p: object): string {
  return p.constructor?.name ?? 'anonymous';
}
