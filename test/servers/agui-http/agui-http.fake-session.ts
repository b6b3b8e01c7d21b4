import { Subject, share, type Observable } from 'rxjs';
import type { AgUiSessionHost } from '../../../src/servers/agui-http/agui-http.handler.js';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import { toAgUi } from '../../../src/core/events/operators/index.js';
import type { AgentRxEvent, SessionEvent } from '../../../src/core/events/session-event.js';
import { AgentRxError } from '../../../src/core/errors.js';
import type { RawEvent } from '../../../src/core/model.js';
import type { LiveResult, LiveSession } from '../../../src/core/plugin/live-session.js';
import type { ClientAnswers, SessionOptions } from '../../../src/core/plugin/session-options.js';
import { InProcessPlacement } from '../../../src/core/session/in-process-placement.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import type { SessionStore } from '../../../src/core/store/session-store.js';

/** What a fake session does when it receives a prompt or a message (`request` counts from 1). */
export type Script = (session: FakeSession, text: string, request: number) => void;

/**
 * A stand-in for a live Session: the test decides what its envelopes carry (`emit` writes the
 * envelopes an AG-UI event comes from). Like the real one it starts on a fresh macrotask (the
 * script of its prompt runs in a `setImmediate`), and answers a message right away, in a microtask
 * (the script of a message). With a store, every envelope is appended to the log `sessionId` as
 * the real session's journal does.
 */
export class FakeSession implements LiveSession {
  readonly events = new Subject<SessionEvent>();
  readonly events$ = this.events.asObservable();
  /** Translated once and shared, as the real session does. */
  readonly agui$: Observable<AgUiEvent> = this.events$.pipe(toAgUi(), share());
  /** Never emits: the endpoint reads envelopes, not results. */
  readonly results$: Observable<LiveResult> = new Subject<LiveResult>();
  readonly result: Promise<LiveResult> = new Promise<LiveResult>(() => undefined);
  /** Every envelope published, in order. */
  readonly log: SessionEvent[] = [];
  readonly texts: string[] = [];
  readonly closed: Promise<void>;
  cancels = 0;
  closes = 0;
  /** The states set with setState, in order. */
  readonly states: Readonly<Record<string, unknown>>[] = [];
  /** Raw events posted with sendEvent, in order. */
  readonly sent: RawEvent[] = [];
  /** When set, message() throws like a session that has just closed. */
  refuse = false;
  private seq = 0;
  private markClosed!: () => void;

  constructor(
    private readonly script: Script,
    prompt: string,
    readonly sessionId: string,
    private readonly store?: SessionStore,
  ) {
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    this.texts.push(prompt);
    setImmediate(() => this.script(this, prompt, 1));
  }
  message(text: string): void {
    if (this.refuse) throw new AgentRxError('session_closed', 'the session is closed');
    this.receive(text);
  }
  setState(state: Readonly<Record<string, unknown>>): void {
    this.states.push(state);
  }
  async sendEvent(event: RawEvent): Promise<void> {
    this.sent.push(event);
  }
  /** The client's answers handed with answerClient, in order. */
  readonly answers: ClientAnswers[] = [];
  async answerClient(answers: ClientAnswers): Promise<void> {
    this.answers.push(answers);
  }
  /** Closes as the real session does (synchronously), then waits until it has. */
  async release(): Promise<void> {
    this.close();
    await this.closed;
  }
  /** Cancels as the real session does at shutdown, then waits until it has closed. */
  async leave(): Promise<void> {
    this.cancel();
    await this.closed;
  }
  cancel(): void {
    this.cancels++;
    this.end();
  }
  /** When set, close() ends the events but `closed` waits for {@link finishClose} (a slow store release). */
  holdClose = false;
  close(): void {
    this.closes++;
    if (!this.holdClose) return this.end();
    this.events.complete();
  }
  /** Lets a held close() complete. */
  finishClose(): void {
    this.markClosed();
  }
  /**
   * Publishes the envelopes these AG-UI events are translated from: RUN_STARTED → run_started,
   * TEXT_MESSAGE_CONTENT → text_delta, RUN_FINISHED → run_finished, RUN_ERROR → run_error;
   * TEXT_MESSAGE_START/END have none (the translation opens a message at its first delta and
   * closes it at the terminal).
   */
  emit(...events: AgUiEvent[]): void {
    for (const e of events) {
      switch (e.type) {
        case 'RUN_STARTED':
          this.publish({ type: 'agentrx.run_started', runId: e.runId, threadId: e.threadId, resumed: false });
          break;
        case 'TEXT_MESSAGE_CONTENT':
          this.publish({ type: 'agentrx.text_delta', text: e.delta, messageId: e.messageId });
          break;
        case 'RUN_FINISHED':
          this.publish({
            type: 'agentrx.run_finished',
            runId: e.runId,
            threadId: e.threadId,
            terminal: 'end_turn',
            stopReason: 'end_turn',
            turns: 1,
            usage: { inputTokens: 1, outputTokens: 1 },
          });
          break;
        case 'RUN_ERROR':
          this.runError(e.code ?? 'error', e.message);
          break;
        case 'TEXT_MESSAGE_START':
        case 'TEXT_MESSAGE_END':
          break;
        default:
          throw new Error(`FakeSession.emit: no envelope for ${e.type}`);
      }
    }
  }
  /** Publishes a synthesized event on events$, in the envelope the real session uses. */
  publish(raw: AgentRxEvent): void {
    const env: SessionEvent = { seq: ++this.seq, sessionId: this.sessionId, turn: 0, provider: 'fake', source: 'agentrx', raw, at: 1_000 + this.seq };
    this.log.push(env);
    // Appended before it is published, as if the store were always ahead of the wire.
    void this.store?.append(this.sessionId, [env]);
    this.events.next(env);
  }
  /** A synthesized `agentrx.run_error`, as the real session publishes it on events$. */
  runError(code: string, message: string): void {
    this.publish({ type: 'agentrx.run_error', runId: '', threadId: '', code, message });
  }
  end(): void {
    this.events.complete();
    this.markClosed();
  }
  private receive(text: string): void {
    this.texts.push(text);
    const n = this.texts.length;
    queueMicrotask(() => this.script(this, text, n));
  }
}

/** Starts a {@link FakeSession} per thread, all following one script, in this process (an in-process placement). */
export class FakeHost implements AgUiSessionHost {
  readonly sessions: FakeSession[] = [];
  readonly placement: InProcessPlacement;
  /** The options each session was started with, in order. */
  readonly started: SessionOptions[] = [];
  /** `store`: where the sessions' logs go (as the AgentRx `sessionStore`). */
  constructor(
    private readonly script: Script,
    readonly sessionStore?: SessionStore,
  ) {
    this.placement = new InProcessPlacement({ start: (opts) => this.start(opts) }, sessionStore ?? new MemorySessionStore());
  }
  start(opts: SessionOptions): FakeSession {
    this.started.push(opts);
    const s = new FakeSession(this.script, opts.prompt ?? '', `fake-session-${this.sessions.length + 1}`, this.sessionStore);
    this.sessions.push(s);
    return s;
  }
}

/** A whole run: RUN_STARTED, one text message with a fixed id, RUN_FINISHED (session-side ids). */
export const answer = (s: FakeSession, messageId: string, text: string, n: number): void =>
  s.emit(
    { type: 'RUN_STARTED', threadId: 'session-thread', runId: `session-thread:run-${n}` },
    { type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId, delta: text },
    { type: 'TEXT_MESSAGE_END', messageId },
    { type: 'RUN_FINISHED', threadId: 'session-thread', runId: `session-thread:run-${n}` },
  );
