import { isMap, type WireMap } from './chat-stream.js';

/**
 * Tool-use ids of the `local` provider. The Session's ledger runs a tool at most once per
 * tool-use id, but some OpenAI-compatible servers reuse a `tool_call` id across turns, or even
 * within one batch for calls with different arguments: taken as is, the later call would be
 * answered with the earlier call's recorded result, silently. So the ToolUse id the Session sees
 * is the model's id when the session has not used it yet, else `<id>#<turn>.<index>` (`turn`: the
 * 1-based position of the assistant message among the conversation's assistant messages,
 * `index`: the call's position in that message). The messages sent back to the model keep the
 * model's own `tool_call_id`.
 *
 * The ids are a pure function of the conversation history (every assistant message counts, however
 * it got there: answered by the model, restored, or seeded by the caller), so a session restored
 * from its transcript (a resume, possibly in another process) derives the same ids as the run
 * that recorded its ledger.
 */
export class LocalCallIds {
  /** Every id taken so far: the model's ids and the derived ones. */
  private used = new Set<string>();
  /** Assistant messages seen so far. */
  private turns = 0;
  /** History entries taken into account so far. */
  private synced = 0;
  /** The ToolUse ids of the last assistant message's calls, in call order. */
  private lastIds: string[] = [];
  /** ToolUse id → the model's `tool_call_id`, for the calls of the last assistant message. */
  private last = new Map<string, string>();

  /** The registry of a conversation: every assistant message of `history` assigned in order. */
  static fromHistory(history: readonly WireMap[]): LocalCallIds {
    const ids = new LocalCallIds();
    ids.sync(history);
    return ids;
  }

  /**
   * Takes into account the entries appended to `history` since the last call (a conversation only
   * grows by appending; a shorter one is taken again from the start) and returns the ToolUse ids of
   * the last assistant message's calls, in call order.
   */
  sync(history: readonly WireMap[]): readonly string[] {
    if (history.length < this.synced) {
      this.used = new Set();
      this.turns = 0;
      this.synced = 0;
      this.lastIds = [];
      this.last = new Map();
    }
    for (; this.synced < history.length; this.synced++) {
      const m = history[this.synced]!;
      if (m['role'] === 'assistant') this.lastIds = this.assign(m);
    }
    return this.lastIds;
  }

  /**
   * Assigns ToolUse ids to the calls of the next assistant message (one with no `tool_calls` still
   * counts as a turn) and returns them in call order, one per entry of `tool_calls` (calls that
   * are not objects get an empty id, as `toToolUse` gives them).
   */
  private assign(message: WireMap): string[] {
    this.turns++;
    const calls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]) : [];
    this.last = new Map();
    return calls.map((call, index) => {
      const wire = isMap(call) && typeof call['id'] === 'string' ? call['id'] : '';
      const id = deriveId(wire, this.turns, index, (x) => this.used.has(x));
      this.used.add(wire);
      this.used.add(id);
      this.last.set(id, wire);
      return id;
    });
  }

  /**
   * The ToolUse ids the next assistant message's first calls will get, without taking them: the
   * message is still streaming, and `wireIds` are the model's ids of its calls 0…n-1, in call order
   * (its calls after those do not change them). The same rule as the message gets once taken into
   * account (`sync`), so a call streamed under the returned id keeps it at the turn's end.
   */
  preview(wireIds: readonly string[]): string[] {
    const taken = new Set<string>();
    const has = (x: string): boolean => this.used.has(x) || taken.has(x);
    return wireIds.map((wire, index) => {
      const id = deriveId(wire, this.turns + 1, index, has);
      taken.add(wire);
      taken.add(id);
      return id;
    });
  }

  /** The model's `tool_call_id` of a ToolUse id of the last assistant message (else the id itself). */
  wireId(toolUseId: string): string {
    return this.last.get(toolUseId) ?? toolUseId;
  }
}

/** The ToolUse id of call `index` of assistant message `turn` whose model id is `wire`, given the ids already `used`. */
function deriveId(wire: string, turn: number, index: number, used: (id: string) => boolean): string {
  if (!used(wire)) return wire;
  const base = `${wire}#${turn}.${index}`;
  let id = base;
  // Only a model that sends ids shaped like derived ones can make this loop run.
  for (let n = 1; used(id); n++) id = `${base}.${n}`;
  return id;
}
