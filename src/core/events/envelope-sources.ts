import type { AgUiEvent } from './agui-event.js';
import { MAX_HELD_RESULTS } from './operators/to-ag-ui.js';
import type { SessionEvent } from './session-event.js';

/**
 * Tells which envelope each AG-UI event of `toAgUi` was translated from, fed the envelopes in the
 * order `toAgUi` sees them. `toAgUi` translates each envelope synchronously, so an AG-UI event
 * comes from the envelope being translated when it is emitted; the one exception is a host-run
 * tool's TOOL_CALL_RESULT that `toAgUi` held until the turn's end announced the call, whose
 * envelope is the `agentrx.host_tool_result` that carried it. Memory is bounded like `toAgUi`'s
 * own hold. One per translation; never throws on a malformed envelope.
 */
export class EnvelopeSources {
  /** The envelope being translated; undefined once the envelopes ended (a synthesized terminal has none). */
  private current: SessionEvent | undefined;
  /** Host-run results of the open run whose TOOL_CALL_RESULT has not come yet, by call id (oldest first). */
  private readonly hostResults = new Map<string, SessionEvent>();

  /** The next envelope goes to `toAgUi`. */
  see(envelope: SessionEvent): void {
    this.current = envelope;
    if (envelope.source !== 'agentrx' || typeof envelope.raw !== 'object' || envelope.raw === null) return;
    const type = envelope.raw.type;
    if (type === 'agentrx.host_tool_result') this.hold(envelope, envelope.raw.toolUse);
    else if (type === 'agentrx.run_started') this.hostResults.clear();
  }

  /** The envelopes ended (or failed): what `toAgUi` emits now, it synthesizes. */
  end(): void {
    this.current = undefined;
    this.hostResults.clear();
  }

  /** The envelope `event`, just emitted by `toAgUi`, was translated from. */
  of(event: AgUiEvent): SessionEvent | undefined {
    const current = this.current;
    if (event.type === 'RUN_FINISHED' || event.type === 'RUN_ERROR') {
      // toAgUi drops the results never announced at the run's end; so does this.
      this.hostResults.clear();
      return current;
    }
    if (event.type !== 'TOOL_CALL_RESULT' || (current?.source === 'agentrx' && current.raw.type === 'agentrx.tool_result')) return current;
    const held = this.hostResults.get(event.toolCallId);
    this.hostResults.delete(event.toolCallId);
    return held;
  }

  private hold(envelope: SessionEvent, toolUse: unknown): void {
    // Envelopes may come from a log written elsewhere: one toAgUi would drop is not held either.
    const id: unknown = typeof toolUse === 'object' && toolUse !== null && 'id' in toolUse ? toolUse.id : undefined;
    // The first result for a call is the one toAgUi emits; later ones are dropped there.
    if (typeof id !== 'string' || this.hostResults.has(id)) return;
    if (this.hostResults.size >= MAX_HELD_RESULTS) {
      const oldest = this.hostResults.keys().next();
      if (oldest.done !== true) this.hostResults.delete(oldest.value);
    }
    this.hostResults.set(id, envelope);
  }
}
