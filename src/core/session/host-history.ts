import type { ToolUse } from '../model.js';
import type { RecoveryEvent } from './host-event-drafts.js';

/**
 * Custom tool uses of a request's history (oldest first) that a `requires_action` turn end names
 * and no posted result answers, in call order, each once: what a `requires_action` that names
 * none of its own batch's uses is answered with (a turn split across stream attachments). A turn
 * end without ids names every use before it; uses no turn end names are not asked for (yet).
 */
export function pendingToolUses(history: readonly RecoveryEvent[]): ToolUse[] {
  const uses = new Map<string, ToolUse>();
  const answered = new Set<string>();
  const named = new Set<string>();
  for (const h of history) {
    if (h.kind === 'tool_use') {
      if (h.runBy === 'caller' && !uses.has(h.use.id)) uses.set(h.use.id, h.use);
    } else if (h.kind === 'tool_answered') {
      if (h.by === 'result') answered.add(h.toolUseId);
    } else if (h.requiresAction) {
      for (const id of h.requiresAction.toolUseIds ?? uses.keys()) named.add(id);
    }
  }
  return [...uses.values()].filter((u) => named.has(u.id) && !answered.has(u.id));
}

/**
 * Host-run tool uses of a request's history that `ids` (a `requires_action`'s names) names and no
 * confirmation answers, in `ids` order, each once: those the host still waits on the caller's
 * allow or deny for, when a `requires_action` re-names them without repeating the uses.
 */
export function awaitingConfirmation(history: readonly RecoveryEvent[], ids: readonly string[]): ToolUse[] {
  const uses = new Map<string, ToolUse>();
  const answered = new Set<string>();
  for (const h of history) {
    if (h.kind === 'tool_use' && h.runBy === 'host' && !uses.has(h.use.id)) uses.set(h.use.id, h.use);
    else if (h.kind === 'tool_answered' && h.by === 'confirmation') answered.add(h.toolUseId);
  }
  const out = new Map<string, ToolUse>();
  for (const id of ids) {
    const use = uses.get(id);
    if (use && !answered.has(id) && !out.has(id)) out.set(id, use);
  }
  return [...out.values()];
}
