import { HttpError } from './cma-http.js';
import type { CmaScriptTurn, CmaWireEvent } from './cma-script.js';
import { isMap, type CmaEmulatorState, type Json, type Session } from './cma-state.js';
import type { CmaStreams } from './cma-streams.js';

/**
 * The scripted agent of the Claude Managed Agents emulator: what a session does with the user
 * events it accepts (validation, storage and echo, interrupts, confirmations, results), and how
 * it plays a scripted turn (see `CmaScriptTurn`), with the turn-indexed faults of the plan (split
 * batches, stale idles, late echoes).
 */

const USER_EVENT_TYPES = new Set([
  'user.message',
  'user.interrupt',
  'user.tool_confirmation',
  'user.custom_tool_result',
  'user.define_outcome',
  'user.tool_result',
  'system.message',
]);

export class CmaScriptedAgent {
  constructor(
    private readonly state: CmaEmulatorState,
    private readonly streams: CmaStreams,
  ) {}

  /**
   * Checks a batch of user events against the session like the service: a non-empty list of
   * known user event types, results only for the session's custom tool uses, confirmations only
   * for tool uses awaiting one, and the required fields. Throws an `HttpError` 400 otherwise.
   */
  validate(s: Session, events: unknown): Json[] {
    if (!Array.isArray(events) || events.length === 0) throw new HttpError(400, 'invalid_request_error', 'events: value must contain at least 1 item');
    events.forEach((e: unknown, i) => {
      if (!isMap(e) || typeof e['type'] !== 'string') throw new HttpError(400, 'invalid_request_error', `events.${i}.type: field required`);
      if (!USER_EVENT_TYPES.has(e['type'])) throw new HttpError(400, 'invalid_request_error', `events.${i}.type: "${e['type']}" is not a user event type`);
      if (e['type'] === 'user.custom_tool_result') {
        const useId = e['custom_tool_use_id'];
        if (typeof useId !== 'string' || !s.toolUseIds.has(useId)) {
          throw new HttpError(400, 'invalid_request_error', `events.${i}.custom_tool_use_id: no custom tool use with id "${String(useId)}" in this session`);
        }
      }
      if (e['type'] === 'user.tool_confirmation') {
        if (typeof e['tool_use_id'] !== 'string' || !s.asks.has(e['tool_use_id'])) {
          throw new HttpError(
            400,
            'invalid_request_error',
            `events.${i}.tool_use_id: no tool use awaiting confirmation with id "${String(e['tool_use_id'])}" in this session`,
          );
        }
        if (e['result'] !== 'allow' && e['result'] !== 'deny')
          throw new HttpError(400, 'invalid_request_error', `events.${i}.result: must be "allow" or "deny"`);
        if (e['deny_message'] !== undefined && e['deny_message'] !== null && e['result'] !== 'deny')
          throw new HttpError(400, 'invalid_request_error', `events.${i}.deny_message: only allowed when result is "deny"`);
      }
      if (e['type'] === 'user.message' && (!Array.isArray(e['content']) || e['content'].length === 0)) {
        throw new HttpError(400, 'invalid_request_error', `events.${i}.content: value must contain at least 1 item`);
      }
      if (e['type'] === 'user.define_outcome' && (typeof e['description'] !== 'string' || !isMap(e['rubric']))) {
        throw new HttpError(400, 'invalid_request_error', `events.${i}: user.define_outcome needs description and rubric`);
      }
    });
    return events as Json[];
  }

  /** Stores and echoes validated user events (a stale idle first when a fault asks for one); returns them as stored. */
  accept(s: Session, events: readonly Json[]): CmaWireEvent[] {
    const state = this.state;
    const stale = events
      .filter((e) => e['type'] === 'user.custom_tool_result' && s.staleFor.has(String(e['custom_tool_use_id'])))
      .map((e) => String(e['custom_tool_use_id']));
    if (stale.length > 0) {
      for (const id of stale) s.staleFor.delete(id);
      this.streams.broadcast(s, this.idle({ type: 'requires_action', event_ids: stale }));
    }
    const accepted: CmaWireEvent[] = [];
    for (const e of events) {
      const type = e['type'];
      const extra =
        type === 'user.define_outcome'
          ? { outcome_id: `outc_${String(state.counters.turn).padStart(4, '0')}`, max_iterations: e['max_iterations'] ?? null }
          : {};
      const stored: CmaWireEvent = { ...e, ...extra, id: state.newEventId(), processed_at: state.now() };
      accepted.push(stored);
      s.received.push(stored);
      if (type === 'user.custom_tool_result') {
        s.answered.add(String(e['custom_tool_use_id']));
        if (state.faults.lateEcho) {
          s.history.push(stored);
          s.lateEchoes.push(stored);
          state.changed();
          continue;
        }
      }
      this.streams.broadcast(s, stored);
    }
    return accepted;
  }

  /** Effects of an accepted batch of user events (already stored and echoed). */
  handleInputs(s: Session, accepted: readonly CmaWireEvent[]): void {
    let startsTurn = false;
    let results = false;
    for (const ev of accepted) {
      const type = ev['type'];
      if (type === 'user.interrupt') {
        s.interrupts++;
        if (s.busy && s.think) {
          clearTimeout(s.think);
          s.busy = false;
          s.think = undefined;
          s.queue.length = 0;
          s.status = 'idle';
          this.emitClosing(s, this.idle({ type: 'end_turn' }));
        }
      } else if (type === 'user.message' || type === 'user.define_outcome') startsTurn = true;
      else if (type === 'user.custom_tool_result') results = true;
      else if (type === 'user.tool_confirmation') {
        const id = String(ev['tool_use_id']);
        const text = s.asks.get(id);
        if (text === undefined || s.answered.has(id)) continue;
        s.answered.add(id);
        results = true;
        const denied = ev['result'] !== 'allow';
        const content = denied ? `denied${typeof ev['deny_message'] === 'string' ? `: ${ev['deny_message']}` : ''}` : text;
        this.streams.broadcast(
          s,
          this.state.stamp({ type: 'agent.tool_result', tool_use_id: id, content: [{ type: 'text', text: content }], is_error: denied }),
        );
      }
    }
    if (results && s.blocking.length > 0) {
      const remaining = s.blocking.filter((id) => !s.answered.has(id));
      if (remaining.length < s.blocking.length) {
        s.blocking = remaining;
        if (remaining.length === 0) startsTurn = true;
        else this.emitClosing(s, this.idle({ type: 'requires_action', event_ids: remaining }));
      }
    }
    if (startsTurn) this.runTurn(s);
  }

  /**
   * Fills a new session's history with `events` (ids and timestamps added where missing); custom
   * tool uses named by its last `requires_action` idle and not answered are what the agent waits for.
   */
  seed(s: Session, events: readonly CmaWireEvent[]): void {
    s.seeded = true;
    for (const e of events) {
      const ev = this.state.stamp(e);
      s.history.push(ev);
      if (ev['type'] === 'agent.custom_tool_use') s.toolUseIds.add(ev['id'] as string);
      if (ev['type'] === 'user.custom_tool_result') s.answered.add(String(ev['custom_tool_use_id']));
      if ((ev['type'] === 'agent.tool_use' || ev['type'] === 'agent.mcp_tool_use') && ev['evaluated_permission'] === 'ask')
        s.asks.set(ev['id'] as string, 'ok');
      if (ev['type'] === 'user.tool_confirmation') s.answered.add(String(ev['tool_use_id']));
    }
    const lastIdle = [...s.history].reverse().find((e) => e['type'] === 'session.status_idle');
    const reason = isMap(lastIdle?.['stop_reason']) ? lastIdle['stop_reason'] : undefined;
    if (reason?.['type'] === 'requires_action' && Array.isArray(reason['event_ids'])) {
      s.blocking = reason['event_ids'].map(String).filter((id) => !s.answered.has(id));
    }
    this.state.changed();
  }

  /** Starts the next scripted turn (queued while the agent still works on one). */
  private runTurn(s: Session): void {
    const state = this.state;
    if (s.status === 'terminated') return;
    if (s.busy) {
      s.queue.push(() => this.runTurn(s));
      return;
    }
    const index = state.counters.turn++;
    const turn = state.script[index];
    s.status = 'running';
    this.streams.broadcast(s, state.stamp({ type: 'session.status_running' }));
    if (!turn) {
      s.status = 'idle';
      this.emitClosing(
        s,
        state.stamp({
          type: 'session.error',
          error: { type: 'unknown_error', message: `cma emulator: script exhausted after ${state.script.length} turn(s)`, retry_status: { type: 'terminal' } },
        }),
      );
      return;
    }
    const rest = (): void => {
      s.busy = false;
      s.think = undefined;
      this.playTurn(s, turn, index);
      const next = s.queue.shift();
      if (next) next();
    };
    if (turn.thinkMs !== undefined && turn.thinkMs > 0) {
      s.busy = true;
      s.think = setTimeout(rest, turn.thinkMs);
      return;
    }
    rest();
  }

  private playTurn(s: Session, turn: CmaScriptTurn, index: number): void {
    const state = this.state;
    const broadcast = (event: CmaWireEvent, o?: { preview?: boolean }): void => this.streams.broadcast(s, event, o);
    const start = state.stamp({ type: 'span.model_request_start' });
    broadcast(start);
    const texts = turn.text === undefined ? [] : typeof turn.text === 'string' ? [turn.text] : turn.text;
    for (const text of texts) {
      const id = state.newEventId();
      if (turn.previews) {
        broadcast({ type: 'event_start', event: { type: 'agent.message', id } }, { preview: true });
        for (const piece of splitText(text)) {
          broadcast(
            { type: 'event_delta', event_id: id, delta: { type: 'content_delta', index: 0, content: { type: 'text', text: piece } } },
            { preview: true },
          );
        }
      }
      broadcast(state.stamp({ type: 'agent.message', id, content: [{ type: 'text', text }] }));
    }
    const askIds: string[] = [];
    for (const t of turn.serverToolUses ?? []) {
      const kind = t.mcpServer !== undefined ? { type: 'agent.mcp_tool_use', mcp_server_name: t.mcpServer } : { type: 'agent.tool_use' };
      const use = state.stamp({ ...kind, id: t.id ?? state.newEventId(), name: t.name, input: t.input ?? {}, evaluated_permission: t.ask ? 'ask' : 'allow' });
      broadcast(use);
      if (t.ask) {
        askIds.push(use['id'] as string);
        s.asks.set(use['id'] as string, t.result ?? 'ok');
      } else broadcast(state.stamp(hostResult(use, t.mcpServer !== undefined, t.result ?? 'ok')));
    }
    const toolIds: string[] = [];
    for (const t of turn.toolUses ?? []) {
      const use = state.stamp({ type: 'agent.custom_tool_use', id: t.id ?? state.newEventId(), name: t.name, input: t.input ?? {} });
      toolIds.push(use['id'] as string);
      s.toolUseIds.add(use['id'] as string);
      broadcast(use);
    }
    const usage = turn.usage ?? { input_tokens: 10, output_tokens: 5 };
    broadcast(
      state.stamp({
        type: 'span.model_request_end',
        model_request_start_id: start['id'],
        is_error: false,
        model_usage: { ...usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      }),
    );
    for (const extra of turn.extra ?? []) broadcast(state.stamp(extra));
    let verdict: string | undefined;
    if (turn.outcome) {
      const outcomeId = `outc_${String(index).padStart(4, '0')}`;
      turn.outcome.verdicts.forEach((v, iteration) => {
        const begin = state.stamp({ type: 'span.outcome_evaluation_start', outcome_id: outcomeId, iteration });
        broadcast(begin);
        broadcast(
          state.stamp({
            type: 'span.outcome_evaluation_end',
            outcome_id: outcomeId,
            iteration,
            outcome_evaluation_start_id: begin['id'],
            result: v,
            explanation: `verdict ${v}`,
            usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
          }),
        );
        verdict = v;
      });
    }
    if (toolIds.length > 0 || askIds.length > 0) {
      s.blocking = [...toolIds, ...askIds];
      if ((state.faults.staleIdleTurns ?? []).includes(index)) for (const id of toolIds) s.staleFor.add(id);
      const named = (state.faults.splitBatchTurns ?? []).includes(index) && toolIds.length > 0 ? toolIds.slice(0, 1) : s.blocking;
      s.status = 'idle';
      this.emitClosing(s, this.idle({ type: 'requires_action', event_ids: named }));
      return;
    }
    s.status = 'idle';
    const end = turn.end;
    if (end && 'terminated' in end) {
      s.status = 'terminated';
      this.emitClosing(s, state.stamp({ type: 'session.status_terminated' }));
    } else if (end && 'error' in end) {
      this.emitClosing(s, state.stamp({ type: 'session.error', error: end.error }));
    } else if (end && 'stopReason' in end) {
      this.emitClosing(s, this.idle(end.stopReason));
    } else if (verdict !== undefined && turn.outcome?.idle !== 'end_turn') {
      this.emitClosing(s, this.idle({ type: verdict }));
    } else {
      this.emitClosing(s, this.idle({ type: 'end_turn' }));
    }
  }

  /** Emits a closing status event, then the result echoes a late-echo fault held back. */
  private emitClosing(s: Session, event: CmaWireEvent): void {
    this.streams.broadcast(s, event);
    if (s.lateEchoes.length > 0) for (const echo of s.lateEchoes.splice(0)) this.streams.broadcast(s, echo, { streamOnly: true });
  }

  private idle(stopReason: Json): CmaWireEvent {
    return this.state.stamp({ type: 'session.status_idle', stop_reason: stopReason, stop_details: null });
  }
}

/** Word-sized preview fragments of `text` (concatenation gives the text back). */
function splitText(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g);
  if (!words || words.join('') !== text) return text === '' ? [] : [text];
  return words;
}

/** The host's result of a tool it ran: `agent.tool_result`, or `agent.mcp_tool_result` for an MCP tool (as the API sends them). */
function hostResult(use: Record<string, unknown>, mcp: boolean, text: string): Record<string, unknown> {
  const content = [{ type: 'text', text }];
  return mcp
    ? { type: 'agent.mcp_tool_result', mcp_tool_use_id: use['id'], content, is_error: false }
    : { type: 'agent.tool_result', tool_use_id: use['id'], content, is_error: false };
}
