import type { Observable } from 'rxjs';
import type { Artifacts } from '../artifacts/artifacts.js';
import { AgentRxError } from '../errors.js';
import type { AgentSpec, Outcome, PriorMessage, RawEvent, RunSetting, RunSettings, ToolConfirmation, ToolResult, ToolUse, TurnResult } from '../model.js';
import type { HostEvent } from './host-event.js';

/** Extension point for loop hosts (see {@link AgentProvider} for the contract). */
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
  /** Client-held history to restore (providers whose history lives in the conn). */
  readonly history?: readonly RawEvent[];
  /**
   * A fresh session's earlier conversation, carried over from a client (an AG-UI thread the
   * server does not know): given only to a provider with `acceptsPriorMessages`, which makes it
   * the history the model sees before the first prompt. The session is still a fresh one.
   */
  readonly priorMessages?: readonly PriorMessage[];
  /** Aborted when the session is cancelled or times out. */
  readonly signal: AbortSignal;
  /**
   * The session's turn limit per request (`limits.maxTurns` or the `maxTurns` session option).
   * Providers that run the loop themselves can warn the model before it (Local's final-turn
   * directive); the Session enforces the limit either way.
   */
  readonly maxTurns?: number;
  /** The session's own model settings (only those the provider lists in `runSettings`, and `outputSchema`). */
  readonly settings?: RunSettings;
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
  /** Host-run tool uses the host is still blocked on, waiting for a confirmation (see `TurnResult.confirmationToolUses`). */
  readonly confirmations?: readonly ToolUse[];
  /**
   * The host is in the middle of a turn (e.g. its last status event says running). The Session
   * sends no input until that turn's boundary arrives, so the boundary is not taken for the
   * answer to the input. Default false.
   */
  readonly midTurn?: boolean;
}

/**
 * Where the Session's ingestion stands, handed to `reconnect`. The Session does not keep every
 * id it ever ingested (a long session would grow without bound): it keeps the most recent ones
 * (`limits.dedupeWindow`), which is enough to find its place in the host's history.
 */
export interface IngestCursor {
  /** How many ids the window holds: 0 until this Session object ingested an event with an id (so 0 on a resume in a new process). */
  readonly ingested: number;
  /** True when `id` is among the most recently ingested ids (a bounded window). */
  has(id: string): boolean;
}

/**
 * The part of `history` (oldest first) the Session has not ingested: the events after the newest
 * one the cursor knows, minus any the window also knows (live events that overtook history).
 * Events without an id are skipped. With nothing ingested yet, every event is missed.
 *
 * Fails with `provider_error` (`details.retryable: false`) when events were ingested but none of
 * them is in `history` (more than the window's worth of events that the host does not list since
 * its last listed one): feeding the whole history would duplicate and feeding none could lose
 * events, and listing again will not change that.
 */
export function missedSince(history: readonly RawEvent[], cursor: IngestCursor, idOf: (e: RawEvent) => string | undefined = defaultEventId): RawEvent[] {
  let anchor = -1;
  for (let i = history.length - 1; i >= 0; i--) {
    const id = idOf(history[i]!);
    if (id !== undefined && cursor.has(id)) {
      anchor = i;
      break;
    }
  }
  if (anchor < 0 && cursor.ingested > 0 && history.some((e) => idOf(e) !== undefined)) {
    throw new AgentRxError(
      'provider_error',
      `cannot find the session's place in the host's history: none of the ${history.length} listed events is among the recently ingested ones; raise limits.dedupeWindow`,
      { retryable: false },
    );
  }
  const missed: RawEvent[] = [];
  for (let i = anchor + 1; i < history.length; i++) {
    const id = idOf(history[i]!);
    if (id !== undefined && !cursor.has(id)) missed.push(history[i]!);
  }
  return missed;
}

/**
 * What every loop host has, whatever its mode. Implementations are `@injectable()` singletons
 * shared by every session: per-session state lives in the opaque `Conn`, and the callbacks that
 * need it receive it. Every async callback receives an AbortSignal (through `open` options or as an
 * argument) and must abort in-flight HTTP when it fires. Throw `AgentRxError` for failures.
 */
export interface ProviderBase<Conn = unknown, Input = unknown> {
  /** Stable kebab-case id (`local`, `claude-managed-agents`, `bedrock-agentcore`). */
  readonly id: string;
  readonly mode: ProviderMode;
  /**
   * `open` takes `OpenOptions.priorMessages` as real history (the host accepts prior messages).
   * Without it, the Session carries them as a delimited block before the first prompt.
   */
  readonly acceptsPriorMessages?: boolean;
  /**
   * The host is sent the agent's tools with every model call (`spec.tools` read again each time),
   * so a session may add tools of its own (`SessionOptions.tools`). Without it the tools are the
   * provisioned agent's.
   */
  readonly toolsPerCall?: boolean;
  /**
   * The per-session model settings the host takes (`OpenOptions.settings`): a session that sets
   * another is refused with `unsupported` before it opens. Default none (the host fixes them when
   * the agent is provisioned).
   */
  readonly runSettings?: readonly RunSetting[];
  /**
   * The host constrains the answer to `settings.outputSchema` itself (a native structured-output
   * form). Without it, the Session asks for the JSON in the prompt. Either way it validates.
   */
  readonly nativeOutputSchema?: boolean;

  /** Creates (or looks up) the provider-side agent for `spec`; returns a durable handle. */
  provision?(spec: AgentSpec, signal: AbortSignal): Promise<unknown>;
  /**
   * Removes what `provision` created for `handle`. Resources it adopted by name (another process
   * may be using them) or took from the config are left alone. Called by `AgentRx.teardown()`.
   */
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
  /**
   * Input answering tool-use confirmations (hosts that ask before running a tool of their own).
   * With `results`, one input carrying those tool results first, so a `requires_action` that names
   * both kinds is answered in one post.
   */
  confirmationInput?(decisions: readonly ToolConfirmation[], results?: Input): Input;

  /** Folds a closed turn's events into the canonical outcome. Pure; never throws on odd input. */
  normalize(events: readonly RawEvent[]): TurnResult;
  /**
   * Decodes one ingested event of the session `conn` into what the Session needs to know of it
   * (text, reasoning, tool-call fragments, a host-run tool's result, tool uses and their answers,
   * a turn's end): the provider reads its wire here, once per event. Called once per ingested
   * event (duplicates are dropped before), in order, so state that joins events (streamed
   * previews) belongs in the conn, never on the provider. Must not throw (a throw counts as
   * nothing decoded); return `NO_HOST_EVENTS` for an event that says nothing.
   */
  decode(conn: Conn, event: RawEvent): readonly HostEvent[];
  /** Dedupe key of an event (undefined: the event is never taken for a duplicate). See `defaultEventId`. */
  eventId(event: RawEvent): string | undefined;
  /** The client-held conversation history, verbatim, if the provider keeps one. */
  transcript?(conn: Conn): readonly RawEvent[] | undefined;
  /**
   * Custom tool uses in a conn restored from a transcript (`OpenOptions.history`) that the history
   * does not answer yet: a process that stopped while tools ran. The Session answers them (through
   * the ledger: a recorded result is replayed, an unrecorded one is re-run only if idempotent)
   * before the prompt. Default: none.
   */
  unansweredToolUses?(conn: Conn): readonly ToolUse[];
  /** True when the host natively honors outcomes. Default false. */
  readonly supportsOutcomes?: boolean;
  /** Releases per-session resources (sockets, timers). Called once when the session ends. */
  close?(conn: Conn): Promise<void> | void;
  /**
   * The files of the provider-side session `sessionId` (see `Artifacts`); absent when the host
   * has no session storage. `handle` is what `provision` returned, when the caller has it.
   * Synchronous and cheap (no I/O: calls are made by the returned object); throws
   * `invalid_config` when the provider is not configured for it.
   */
  artifacts?(sessionId: string, handle?: unknown): Artifacts;
}

/**
 * A host that runs the loop itself and streams its events on a long-lived attachment; inputs are
 * posted out of band and a turn ends on the event its `decode` reports as `turn_end` (Claude
 * Managed Agents).
 */
export interface StreamingProvider<Conn = unknown, Input = unknown> extends ProviderBase<Conn, Input> {
  readonly mode: 'streaming';
  /**
   * Attaches the event stream. Emits `{kind:'open'}` once connected, then events. Completes on a
   * clean close and errors on a drop; the Session treats both as a drop unless the session ended.
   * Unsubscribing must abort the underlying request.
   */
  stream(conn: Conn): Observable<StreamItem>;
  /** Posts input; its events arrive on the stream. */
  pushInput(conn: Conn, input: Input, signal: AbortSignal): Promise<void>;
  /**
   * Called after the Session re-attached the stream (a drop, or a resume): lists history and
   * returns what was missed and what is unanswered. Default: nothing. `cursor` tells where
   * ingestion stands; `missedSince(history, cursor)` computes `missed`. The Session retries a
   * rejection with backoff, unless it is an AgentRxError whose `details.retryable` is false: that
   * ends the session with it.
   */
  reconnect?(conn: Conn, cursor: IngestCursor, signal: AbortSignal): Promise<Reconnected>;
  /** Asks the host to stop the current turn (best effort, on cancel/timeout). */
  interrupt?(conn: Conn, signal: AbortSignal): Promise<void>;
  /** Input carrying one raw user event; absent → `sendEvent` is unsupported. */
  rawInput?(event: RawEvent): Input;
}

/**
 * A host called once per turn (request/response): the input goes out, the turn's events stream
 * back, and the end of the batch closes the turn (Local, Bedrock AgentCore).
 */
export interface TurnProvider<Conn = unknown, Input = unknown> extends ProviderBase<Conn, Input> {
  readonly mode: 'request_response';
  /**
   * Runs one turn: sends `input` and emits the turn's events as they arrive, completing at the end
   * of the batch. Unsubscribing aborts the request.
   */
  pollTurn(conn: Conn, input: Input): Observable<RawEvent>;
}

/**
 * A loop host: a {@link StreamingProvider} or a {@link TurnProvider}, told apart by `mode`. The
 * callback set of the Elixir reference library `req_managed_agents`, each mode with only the
 * callbacks it uses; streams are RxJS Observables instead of messages to a subscriber process, and
 * its `ref(conn)`/`consumer(conn)` are the subscription the Session holds on `stream()` (each
 * subscription is one attachment with its own generation).
 */
export type AgentProvider<Conn = unknown, Input = unknown> = StreamingProvider<Conn, Input> | TurnProvider<Conn, Input>;

/** The usual `eventId`: the event's non-empty string `id`. */
export function defaultEventId(event: RawEvent): string | undefined {
  const id = event['id'];
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}
