import type { Observable } from 'rxjs';
import type { AgentSpec, Outcome, RawEvent, ToolResult, ToolUse, TurnResult } from '../model.js';

/**
 * Extension point for loop hosts. A TypeScript rendering of the seed Provider callback set: every
 * callback is kept; streams are RxJS Observables instead of messages to a subscriber process.
 * The seed's `ref(conn)` and `consumer(conn)` are subsumed by the subscription the Session holds
 * on `stream()`: each subscription is one attachment with its own generation.
 */
export const AgentProvider = Symbol('AgentProvider');

/** `streaming`: long-lived event stream, inputs posted out of band. `request_response`: one call per turn. */
export type ProviderMode = 'streaming' | 'request_response';

/** Options for `open`. */
export interface OpenOptions {
  /** Resume this existing provider session instead of creating one. */
  readonly sessionId?: string;
  readonly spec: AgentSpec;
  /** Provider-side handle returned by `provision`, if any. */
  readonly handle?: unknown;
  /** Client-held history to re-seed (providers whose history lives in the conn). */
  readonly history?: readonly RawEvent[];
  /** Aborted when the session is cancelled or times out. */
  readonly signal: AbortSignal;
}

/** Options for `kickoffInput`. */
export interface KickoffOptions {
  /** The user's prompt; undefined when none was given (the provider picks a default such as "Begin."). */
  readonly prompt?: string;
  readonly outcome?: Outcome;
}

/** One item of a stream attachment. */
export type StreamItem =
  | { readonly kind: 'open' }
  | { readonly kind: 'event'; readonly event: RawEvent }
  /** Something worth reporting that is not an event (bad JSON frame, heartbeat gap…). */
  | { readonly kind: 'diagnostic'; readonly message: string };

/** What `reconnect` recovered from the host's history after a drop or on resume. */
export interface Reconnected {
  /** History events the Session has not ingested yet, oldest first; fed into the normal pipeline. */
  readonly missed: readonly RawEvent[];
  /** Custom tool uses with no answer in the whole history, in call order. */
  readonly pending: readonly ToolUse[];
}

/**
 * A loop host. Implementations are `@injectable()` singletons; per-session state lives in the
 * opaque `Conn`. Every async callback receives an AbortSignal (through `open` options or as an
 * argument) and must abort in-flight HTTP when it fires. Throw `AgentRxError` for failures.
 */
export interface AgentProvider<Conn = unknown, Input = unknown> {
  /** Stable kebab-case id (`local`, `claude-managed-agents`, `bedrock-agentcore`). */
  readonly id: string;
  readonly mode: ProviderMode;

  /** Creates (or looks up) the provider-side agent for `spec`; returns a durable handle. */
  provision?(spec: AgentSpec, signal: AbortSignal): Promise<unknown>;
  /** Deletes the provider-side resource named by `handle`. */
  teardown?(handle: unknown, signal: AbortSignal): Promise<void>;

  /** Establishes the session (fresh, or resumed when `opts.sessionId` is set). Does not attach a stream. */
  open(opts: OpenOptions): Promise<Conn>;
  /** The provider-side session id, if the concept applies. */
  sessionId(conn: Conn): string | undefined;
  /** Whether `open` consolidated an existing session (a resume) rather than creating one. */
  resumed(conn: Conn): boolean;

  /** Input that kicks off the conversation. */
  kickoffInput(opts: KickoffOptions): Input;
  /** Input for a follow-up user message. */
  userInput(text: string): Input;
  /** Input that resumes the loop after local tools ran; `results` are in `toolUses` order. */
  resumeInput(toolUses: readonly ToolUse[], results: readonly ToolResult[]): Input;
  /** Input carrying one raw user event (streaming hosts only); absent → `sendEvent` is unsupported. */
  rawInput?(event: RawEvent): Input;

  /**
   * streaming only — attaches the event stream. Emits `{kind:'open'}` once connected, then events.
   * Completes on a clean close and errors on a drop; the Session treats both as a drop unless a
   * terminal was seen. Unsubscribing must abort the underlying request.
   */
  stream?(conn: Conn): Observable<StreamItem>;
  /** streaming only — posts input; events arrive on the stream. */
  pushInput?(conn: Conn, input: Input, signal: AbortSignal): Promise<void>;
  /** streaming only — does this event close a turn? */
  isTurnBoundary?(event: RawEvent): boolean;
  /**
   * streaming only — called after the Session re-attached the stream (a drop, or a resume):
   * lists history and returns what was missed and what is unanswered. Default: nothing.
   * `seen` holds the ids of every event already ingested.
   */
  reconnect?(conn: Conn, seen: ReadonlySet<string>, signal: AbortSignal): Promise<Reconnected>;
  /** streaming only — asks the host to stop the current turn (best effort, on cancel/timeout). */
  interrupt?(conn: Conn, signal: AbortSignal): Promise<void>;

  /**
   * request_response only — runs one turn: sends `input` and emits the turn's events as they
   * arrive, completing at the end of the batch. Unsubscribing aborts the request.
   */
  pollTurn?(conn: Conn, input: Input): Observable<RawEvent>;

  /** Folds a closed turn's events into the canonical outcome. Pure; never throws on odd input. */
  normalize(events: readonly RawEvent[]): TurnResult;
  /**
   * Recovers unanswered custom tool uses from the request's full event history (oldest first)
   * when a `requires_action` turn names none of its own. Default: none recoverable.
   */
  pendingToolUses?(history: readonly RawEvent[]): readonly ToolUse[];
  /** Maps one raw event to a normalized text chunk (or undefined). Default: no deltas. */
  textDelta?(event: RawEvent): string | { readonly text: string; readonly messageId?: string } | undefined;
  /** Dedupe key of an event. Default: its string `id` field. */
  eventId?(event: RawEvent): string | undefined;
  /** The client-held conversation history, verbatim, if the provider keeps one. */
  transcript?(conn: Conn): readonly RawEvent[] | undefined;
  /** True when the host natively honors outcomes. Default false. */
  readonly supportsOutcomes?: boolean;
  /** Releases per-session resources (sockets, timers). Called once when the session ends. */
  close?(conn: Conn): Promise<void> | void;
}

/** Default `eventId`: the event's string `id`. */
export function defaultEventId(event: RawEvent): string | undefined {
  const id = event['id'];
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}
