import type { RawEvent, ToolUse } from '../../../core/model.js';
import { requestedIds, toToolUse } from './cma-normalize.js';
import { CmaEventType, idOf, isMap, typeOf } from './cma-wire.js';

/** Custom tool uses remembered per session at most (the oldest are forgotten first). */
export const MAX_TRACKED_TOOL_USES = 1_000;

/**
 * One session's custom tool uses as its events arrive, so that a `requires_action` idle naming a
 * use whose `agent.custom_tool_use` came in an earlier turn (the host asked for one turn's uses
 * in two batches) can list it in its own turn's result. A use is remembered until a
 * `user.custom_tool_result` answers it; once an idle has named it, later idles re-naming it
 * (a stale idle) do not list it again.
 */
export class CmaToolBatches {
  /** Unanswered uses by id, oldest first; `named`: an idle already asked for it. */
  private readonly uses = new Map<string, { readonly use: ToolUse; named: boolean }>();

  /**
   * Takes one event of the session, in order. For a `requires_action` idle, returns the uses it
   * names that no idle named before (in its order), whether they came in its turn or earlier;
   * undefined for any other event. Never throws on odd input.
   */
  observe(event: RawEvent): readonly ToolUse[] | undefined {
    const type = typeOf(event);
    if (type === CmaEventType.agentCustomToolUse) {
      const id = idOf(event);
      if (id !== undefined && !this.uses.has(id)) this.remember(id, toToolUse(event));
      return undefined;
    }
    if (type === CmaEventType.userCustomToolResult) {
      const id = event['custom_tool_use_id'];
      if (typeof id === 'string') this.uses.delete(id);
      return undefined;
    }
    const reason = type === CmaEventType.statusIdle ? event['stop_reason'] : undefined;
    if (!isMap(reason) || reason['type'] !== 'requires_action') return undefined;
    const asked: ToolUse[] = [];
    for (const id of requestedIds(reason)) {
      const entry = this.uses.get(id);
      if (!entry || entry.named) continue;
      entry.named = true;
      asked.push(entry.use);
    }
    return asked;
  }

  /** Forgets everything (the conn closed). */
  clear(): void {
    this.uses.clear();
  }

  private remember(id: string, use: ToolUse): void {
    this.uses.set(id, { use, named: false });
    if (this.uses.size > MAX_TRACKED_TOOL_USES) this.uses.delete(this.uses.keys().next().value!);
  }
}
