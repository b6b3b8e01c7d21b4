import { emptyUsage, type RawEvent, type ToolUse, type TurnResult, type TurnTerminal, type Usage } from '../../../core/model.js';
import { CmaEventType, idOf, isMap, typeOf, type WireMap } from './cma-wire.js';
import { textBlocks } from './cma-text-deltas.js';

export { CmaTextDeltas, MAX_TRACKED_PREVIEWS } from './cma-text-deltas.js';

/**
 * Pure interpretation of Claude Managed Agents events: turn boundaries, the fold of a closed turn
 * into a `TurnResult`, recovery of unanswered custom tool uses from history, usage and text.
 * Nothing here rewrites or drops a raw event: normalization is additive.
 */

/** Idle stop reasons that end the turn normally (`satisfied`/`max_iterations_reached`: outcome runs). */
const END_TURN_REASONS = new Set(['end_turn', 'satisfied', 'max_iterations_reached']);

/** Outcome verdicts that override an `end_turn` idle and terminate the run. */
const TERMINATING_VERDICTS = new Set(['failed']);

/**
 * True for events that close a turn: `session.status_idle`, `session.status_terminated`,
 * `session.deleted` and `session.error` — except a `session.error` whose `retry_status` is
 * `retrying` (the service is retrying by itself and the turn goes on; the official types say the
 * client should wait). Never throws.
 */
export function isCmaTurnBoundary(event: RawEvent): boolean {
  switch (typeOf(event)) {
    case CmaEventType.statusIdle:
    case CmaEventType.statusTerminated:
    case CmaEventType.sessionDeleted:
      return true;
    case CmaEventType.sessionError:
      return retryStatusOf(event) !== 'retrying';
    default:
      return false;
  }
}

/**
 * Folds a closed turn's events (oldest first) into a `TurnResult`, keyed on the most recent
 * status event (`session.status_idle`, `session.status_terminated`, `session.deleted`,
 * `session.error`):
 * - idle `end_turn`, `satisfied`, `max_iterations_reached` → `end_turn`, unless the turn's last
 *   `span.outcome_evaluation_end` reports `failed` (then `terminated`);
 * - idle `requires_action` → `requires_action`, custom tool uses taken from
 *   `stop_reason.event_ids` in that order (uses of the batch only; other custom tool uses are not
 *   ours): from the turn's events, else from `earlier(idle)` (the uses the idle names that came
 *   in an earlier turn, as its caller tracked them); the ids are also returned as `requestedToolUseIds`;
 * - any other idle reason, a null/absent/typeless stop reason, terminated, deleted, error, or no
 *   status event at all → `terminated`.
 * `stopReason` is the raw `stop_reason` of the idle (verbatim), the raw `error` of a
 * `session.error`, or the status event's type otherwise. Pure; never throws on odd input.
 */
export function normalizeCmaTurn(events: readonly RawEvent[], earlier: (idle: RawEvent) => readonly ToolUse[] | undefined = () => undefined): TurnResult {
  const status = lastStatus(events);
  const base = {
    text: turnText(events),
    serverToolUses: events.filter((e) => typeOf(e) === CmaEventType.agentToolUse || typeOf(e) === CmaEventType.agentMcpToolUse).map(hostToolUse),
    usage: usageOf(events),
    events: [...events],
  };
  if (!status) return { ...base, terminal: 'terminated', stopReason: undefined, customToolUses: [] };
  const type = typeOf(status);
  if (type === CmaEventType.sessionError) return { ...base, terminal: 'terminated', stopReason: status['error'] ?? type, customToolUses: [] };
  if (type !== CmaEventType.statusIdle) return { ...base, terminal: 'terminated', stopReason: status['stop_reason'] ?? type, customToolUses: [] };

  const stopReason = status['stop_reason'];
  const reason = isMap(stopReason) && typeof stopReason['type'] === 'string' ? stopReason['type'] : undefined;
  if (reason === 'requires_action' && isMap(stopReason)) {
    const ids = requestedIds(stopReason);
    const uses = new Map<string, RawEvent>();
    for (const e of events) {
      const id = idOf(e);
      if (typeOf(e) === CmaEventType.agentCustomToolUse && id !== undefined && !uses.has(id)) uses.set(id, e);
    }
    const before = new Map((earlier(status) ?? []).map((u) => [u.id, u]));
    const seen = new Set<string>();
    const customToolUses: ToolUse[] = [];
    for (const id of ids) {
      const use = uses.get(id);
      const found = use ? toToolUse(use) : before.get(id);
      if (found && !seen.has(id)) {
        seen.add(id);
        customToolUses.push(found);
      }
    }
    const confirmationToolUses = awaitingConfirmation(events, ids);
    return {
      ...base,
      terminal: 'requires_action',
      stopReason,
      customToolUses,
      requestedToolUseIds: ids,
      ...(confirmationToolUses.length > 0 ? { confirmationToolUses } : {}),
    };
  }
  let terminal: TurnTerminal = reason !== undefined && END_TURN_REASONS.has(reason) ? 'end_turn' : 'terminated';
  if (terminal === 'end_turn' && reason === 'end_turn') {
    const verdict = lastVerdict(events);
    if (verdict !== undefined && TERMINATING_VERDICTS.has(verdict)) terminal = 'terminated';
  }
  return { ...base, terminal, stopReason, customToolUses: [] };
}

/**
 * Custom tool uses in `history` (oldest first) that some `requires_action` idle names in its
 * `stop_reason.event_ids` and that no `user.custom_tool_result` answers, in call order, each
 * once. Uses no idle ever asked for are not ours (or not asked yet) and are left out. Pure.
 */
export function pendingCmaToolUses(history: readonly RawEvent[]): ToolUse[] {
  const answered = new Set<string>();
  const named = new Set<string>();
  for (const e of history) {
    const type = typeOf(e);
    if (type === CmaEventType.userCustomToolResult && typeof e['custom_tool_use_id'] === 'string') answered.add(e['custom_tool_use_id']);
    else if (type === CmaEventType.statusIdle && isMap(e['stop_reason']) && e['stop_reason']['type'] === 'requires_action') {
      for (const id of requestedIds(e['stop_reason'])) named.add(id);
    }
  }
  const out = new Map<string, ToolUse>();
  for (const e of history) {
    const id = idOf(e);
    if (typeOf(e) !== CmaEventType.agentCustomToolUse || id === undefined) continue;
    if (answered.has(id) || !named.has(id) || out.has(id)) continue;
    out.set(id, toToolUse(e));
  }
  return [...out.values()];
}

/**
 * The `agent.tool_use` / `agent.mcp_tool_use` events of `events` (oldest first) that `ids` (a
 * `requires_action` idle's `stop_reason.event_ids`) names and that no `user.tool_confirmation`
 * in `events` answers, in `ids` order, each once: host-run tools waiting for the caller's allow
 * or deny. An MCP tool's name is `<server>/<tool>`. Pure.
 */
export function awaitingConfirmation(events: readonly RawEvent[], ids: readonly string[]): ToolUse[] {
  const uses = new Map<string, RawEvent>();
  const answered = new Set<string>();
  for (const e of events) {
    const type = typeOf(e);
    const id = idOf(e);
    if ((type === CmaEventType.agentToolUse || type === CmaEventType.agentMcpToolUse) && id !== undefined && !uses.has(id)) uses.set(id, e);
    else if (type === CmaEventType.userToolConfirmation && typeof e['tool_use_id'] === 'string') answered.add(e['tool_use_id']);
  }
  const out = new Map<string, ToolUse>();
  for (const id of ids) {
    const e = uses.get(id);
    if (!e || answered.has(id) || out.has(id)) continue;
    out.set(id, hostToolUse(e));
  }
  return [...out.values()];
}

/** A host-run tool use: `agent.tool_use`, or `agent.mcp_tool_use` named `<server>/<tool>`. */
export function hostToolUse(e: RawEvent): ToolUse {
  const use = toToolUse(e);
  const server = e['mcp_server_name'];
  return typeOf(e) === CmaEventType.agentMcpToolUse && typeof server === 'string' ? { ...use, name: `${server}/${use.name}` } : use;
}

/**
 * The result of a tool the host ran: an `agent.tool_result` (answers an `agent.tool_use`,
 * `tool_use_id`) or an `agent.mcp_tool_result` (answers an `agent.mcp_tool_use`,
 * `mcp_tool_use_id`). `content` is the blocks as text (text blocks; a search result as its title
 * and text; other blocks as `[image]`, `[document]`), joined by newlines; `is_error` absent or
 * null is false. Undefined for any other event or one without its id. Pure; never throws.
 */
export function cmaHostToolResult(event: RawEvent): { toolUseId: string; content: string; isError: boolean } | undefined {
  const type = typeOf(event);
  const key = type === CmaEventType.agentToolResult ? 'tool_use_id' : type === CmaEventType.agentMcpToolResult ? 'mcp_tool_use_id' : undefined;
  if (key === undefined) return undefined;
  const toolUseId = event[key];
  if (typeof toolUseId !== 'string' || toolUseId.length === 0) return undefined;
  return { toolUseId, content: blocksText(event['content']), isError: event['is_error'] === true };
}

function blocksText(content: unknown, depth = 0): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content) || depth > 8) return '';
  const parts: string[] = [];
  for (const block of content) {
    if (!isMap(block)) continue;
    if (block['type'] === 'text' && typeof block['text'] === 'string') parts.push(block['text']);
    else if (block['type'] === 'search_result')
      parts.push([typeof block['title'] === 'string' ? block['title'] : '', blocksText(block['content'], depth + 1)].filter((s) => s !== '').join('\n'));
    else if (typeof block['type'] === 'string') parts.push(`[${block['type']}]`);
  }
  return parts.join('\n');
}

/**
 * When the history's last turn boundary is a `requires_action` idle, the host-run tool uses it
 * names that no `user.tool_confirmation` answers (the host is still blocked on them); else none.
 * Pure.
 */
export function blockedOnConfirmation(history: readonly RawEvent[]): ToolUse[] {
  for (let i = history.length - 1; i >= 0; i--) {
    const e = history[i]!;
    if (!isCmaTurnBoundary(e)) continue;
    const reason = e['stop_reason'];
    if (typeOf(e) !== CmaEventType.statusIdle || !isMap(reason) || reason['type'] !== 'requires_action') return [];
    return awaitingConfirmation(history, requestedIds(reason));
  }
  return [];
}

/** Usage summed over `span.model_request_end` events (`model_usage`, falling back to `usage`). */
export function usageOf(events: readonly RawEvent[]): Usage {
  let usage = emptyUsage();
  for (const e of events) {
    if (typeOf(e) !== CmaEventType.modelRequestEnd) continue;
    const u = isMap(e['model_usage']) ? e['model_usage'] : isMap(e['usage']) ? e['usage'] : undefined;
    if (!u) continue;
    usage = { inputTokens: usage.inputTokens + count(u['input_tokens']), outputTokens: usage.outputTokens + count(u['output_tokens']) };
  }
  return usage;
}

/** The text of one `agent.message`: its `text` blocks joined with `\n` (other blocks skipped). */
export function messageText(event: RawEvent): string {
  return textBlocks(event)
    .map((b) => b.text)
    .join('\n');
}

// ---------------------------------------------------------------------------------------------

function lastStatus(events: readonly RawEvent[]): RawEvent | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const type = typeOf(events[i]);
    if (
      type === CmaEventType.statusIdle ||
      type === CmaEventType.statusTerminated ||
      type === CmaEventType.sessionError ||
      type === CmaEventType.sessionDeleted
    ) {
      return events[i];
    }
  }
  return undefined;
}

/** The tool-use ids a `requires_action` stop reason names (`event_ids`), in order. */
export function requestedIds(stopReason: WireMap): string[] {
  const ids = stopReason['event_ids'];
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
}

function lastVerdict(events: readonly RawEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (typeOf(e) !== CmaEventType.outcomeEvaluationEnd) continue;
    // The official types name the verdict `result`; older material calls it `verdict`.
    const v = e['result'] ?? e['verdict'];
    return typeof v === 'string' ? v : undefined;
  }
  return undefined;
}

/** The `error.retry_status.type` of a `session.error` (`retrying`: the service retries by itself). */
export function retryStatusOf(event: RawEvent): string | undefined {
  const err = event['error'];
  const rs = isMap(err) ? err['retry_status'] : undefined;
  return isMap(rs) && typeof rs['type'] === 'string' ? rs['type'] : undefined;
}

function turnText(events: readonly RawEvent[]): string {
  return events
    .filter((e) => typeOf(e) === CmaEventType.agentMessage)
    .map(messageText)
    .filter((t) => t !== '')
    .join('\n');
}

/** A custom tool use (`agent.custom_tool_use`); an input that is not a JSON object becomes `inputError`. */
export function toToolUse(e: RawEvent): ToolUse {
  const id = idOf(e) ?? '';
  const name = typeof e['name'] === 'string' ? e['name'] : '';
  const input = e['input'];
  if (input === undefined || input === null) return { id, name, input: {} };
  if (isMap(input)) return { id, name, input };
  return { id, name, input: {}, inputError: `Tool input must be a JSON object, got ${Array.isArray(input) ? 'an array' : typeof input}.` };
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}
