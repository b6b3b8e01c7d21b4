import { Subject } from 'rxjs';
import type { AgUiSessionHost } from '../../../src/consumers/agui-http/agui-http.handler.js';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import type { AgentRxEvent, SessionEvent } from '../../../src/core/events/session-event.js';
import { AgentRxError } from '../../../src/core/errors.js';
import type { Session } from '../../../src/core/session/session.js';

/** What a fake session does when it receives a prompt or a message (`request` counts from 1). */
export type Script = (session: FakeSession, text: string, request: number) => void;

/**
 * A stand-in for a live Session: the test decides what its AG-UI stream carries. Like the real
 * one it emits nothing synchronously inside start()/message() (the script runs in a microtask).
 */
export class FakeSession {
  readonly agui = new Subject<AgUiEvent>();
  readonly events = new Subject<SessionEvent>();
  readonly agui$ = this.agui.asObservable();
  readonly events$ = this.events.asObservable();
  readonly texts: string[] = [];
  readonly closed: Promise<void>;
  cancels = 0;
  closes = 0;
  /** When set, message() throws like a session that has just closed. */
  refuse = false;
  private seq = 0;
  private markClosed!: () => void;

  constructor(private readonly script: Script, prompt: string) {
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    this.receive(prompt);
  }
  message(text: string): void {
    if (this.refuse) throw new AgentRxError('session_closed', 'the session is closed');
    this.receive(text);
  }
  cancel(): void {
    this.cancels++;
    this.end();
  }
  close(): void {
    this.closes++;
    this.end();
  }
  emit(...events: AgUiEvent[]): void {
    for (const e of events) this.agui.next(e);
  }
  /** Publishes a synthesized event on events$, in the envelope the real session uses. */
  publish(raw: AgentRxEvent): void {
    this.events.next({ seq: ++this.seq, sessionId: 's', turn: 0, provider: 'fake', source: 'agentrx', raw, at: 0 });
  }
  /** A synthesized `agentrx.run_error`, as the real session publishes it on events$. */
  runError(code: string, message: string): void {
    this.publish({ type: 'agentrx.run_error', runId: '', threadId: '', code, message });
  }
  end(): void {
    this.events.complete();
    this.agui.complete();
    this.markClosed();
  }
  private receive(text: string): void {
    this.texts.push(text);
    const n = this.texts.length;
    queueMicrotask(() => this.script(this, text, n));
  }
}

/** Starts a {@link FakeSession} per thread, all following one script. */
export class FakeHost implements AgUiSessionHost {
  readonly sessions: FakeSession[] = [];
  constructor(private readonly script: Script) {}
  start(opts: { prompt?: string }): Session {
    const s = new FakeSession(this.script, opts.prompt ?? '');
    this.sessions.push(s);
    // The endpoint uses only what FakeSession implements (events$, agui$, message, cancel, close, closed).
    return s as unknown as Session;
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
