import type { AgUiEvent } from '../agui-event.js';
import { stamp } from '../agui-streams.js';
import type { HostToolResultEvent, SessionEvent, ToolResultEvent } from '../session-event.js';

/** Host-run tool results held for a call not announced yet, per run; beyond this the oldest is dropped. */
export const MAX_HELD_RESULTS = 1_000;

/** Tool calls whose TOOL_CALL_RESULT went out, remembered across runs (the most recent this many). */
export const RESULTED_WINDOW = 10_000;

/** Shared empty result: a held or dropped result translates to nothing. */
const NONE: AgUiEvent[] = [];

/**
 * The tool-result half of `toAgUi`, per subscription: local results become TOOL_CALL_RESULT at
 * once; a host-run result goes out only after its call's TOOL_CALL_END. The host usually reports
 * a result before the turn's end announces its call, so an early result is held until the call is
 * announced, and forgotten with the run if it never is. Each announced call gets one TOOL_CALL_RESULT,
 * across runs: a result the log holds twice (replayed from the ledger after a takeover or a
 * resume) is not sent again; a call announced again (an id reused) may get one again.
 */
export class AgUiToolResults {
  /** Tool calls whose TOOL_CALL_RESULT went out since they were last announced, in any run of the stream (oldest first). */
  private readonly resulted = new Set<string>();
  /** Tool calls this run announced: true once a host-run result was emitted for it. */
  private readonly announced = new Map<string, boolean>();
  /** Host-run results that came before their call was announced, by call id (insertion order: oldest first). */
  private readonly held = new Map<string, { readonly ev: HostToolResultEvent; readonly content: string; readonly at: number | undefined }>();
  /**
   * The envelope each held result came in (keyed by its event, which becomes the TOOL_CALL_RESULT's
   * `rawEvent`): what a held result's AG-UI event was translated from. Weak: an entry goes with its result.
   */
  private readonly heldIn = new WeakMap<object, SessionEvent>();

  /** Whether this run announced `toolCallId`. */
  isAnnounced(toolCallId: string): boolean {
    return this.announced.has(toolCallId);
  }

  /** Records `toolCallId` as announced in this run and appends a host-run result held for it to `into`. */
  announce(toolCallId: string, at: number | undefined, into: AgUiEvent[]): void {
    // A call announced again (a new call reusing an id) may get a result again.
    this.resulted.delete(toolCallId);
    if (!this.announced.has(toolCallId)) this.announced.set(toolCallId, false);
    const early = this.held.get(toolCallId);
    if (early !== undefined) {
      this.held.delete(toolCallId);
      this.announced.set(toolCallId, true);
      if (this.once(toolCallId)) into.push(toolCallResult(early.ev, toolCallId, early.content, at));
    }
  }

  /** The TOOL_CALL_RESULT of a local tool's result; nothing for a malformed one. */
  local(ev: ToolResultEvent, at: number | undefined): AgUiEvent[] {
    const fields = fieldsOf(ev);
    return fields === undefined || !this.once(fields.toolCallId) ? NONE : [toolCallResult(ev, fields.toolCallId, fields.content, at)];
  }

  /**
   * The TOOL_CALL_RESULT of a host-run tool's result when its call is announced and has none yet;
   * otherwise nothing, the result being held (call not announced yet) or dropped.
   */
  host(ev: HostToolResultEvent, at: number | undefined, envelope?: SessionEvent): AgUiEvent[] {
    const fields = fieldsOf(ev);
    if (fields === undefined) return NONE;
    const { toolCallId, content } = fields;
    const resulted = this.announced.get(toolCallId);
    if (resulted === true) return NONE;
    if (resulted === false) {
      this.announced.set(toolCallId, true);
      return this.once(toolCallId) ? [toolCallResult(ev, toolCallId, content, at)] : NONE;
    }
    // Not announced yet (its turn has not ended): held until it is; the first result wins.
    if (this.held.has(toolCallId)) return NONE;
    if (this.held.size >= MAX_HELD_RESULTS) this.held.delete(this.held.keys().next().value as string);
    this.held.set(toolCallId, { ev, content, at });
    if (envelope !== undefined) this.heldIn.set(ev, envelope);
    return NONE;
  }

  /** The envelope a held result (the `rawEvent` of a TOOL_CALL_RESULT emitted at its call's announcement) came in. */
  envelopeOf(rawEvent: unknown): SessionEvent | undefined {
    return typeof rawEvent === 'object' && rawEvent !== null ? this.heldIn.get(rawEvent) : undefined;
  }

  /** True the first time a TOOL_CALL_RESULT of `toolCallId` goes out. */
  private once(toolCallId: string): boolean {
    if (this.resulted.has(toolCallId)) return false;
    this.resulted.add(toolCallId);
    if (this.resulted.size > RESULTED_WINDOW) this.resulted.delete(this.resulted.values().next().value as string);
    return true;
  }

  /** Forgets the run: the calls it announced, and the results never announced (the calls that got their result are remembered). */
  clear(): void {
    this.announced.clear();
    this.held.clear();
  }
}

/**
 * The call id and content of a result event, or `undefined` when malformed: the typed event still
 * comes from outside (a hand-built envelope may lie about its shape).
 */
function fieldsOf(ev: ToolResultEvent | HostToolResultEvent): { readonly toolCallId: string; readonly content: string } | undefined {
  if (!isObject(ev.toolUse) || !isObject(ev.result)) return undefined;
  const toolCallId: unknown = ev.toolUse.id;
  const content: unknown = ev.result.content;
  return typeof toolCallId === 'string' && toolCallId.length > 0 && typeof content === 'string' ? { toolCallId, content } : undefined;
}

/**
 * The TOOL_CALL_RESULT of a tool's result. AG-UI has no error flag on results: the verbatim
 * `agentrx.tool_result` (isError, replayed, durationMs) or `agentrx.host_tool_result` (isError)
 * rides in `rawEvent` for consumers that want it.
 */
function toolCallResult(ev: ToolResultEvent | HostToolResultEvent, toolCallId: string, content: string, at: number | undefined): AgUiEvent {
  return stamp({ type: 'TOOL_CALL_RESULT', messageId: `${toolCallId}:result`, toolCallId, content, role: 'tool', rawEvent: ev }, at);
}

function isObject(v: unknown): v is { readonly [key: string]: unknown } {
  return typeof v === 'object' && v !== null;
}
