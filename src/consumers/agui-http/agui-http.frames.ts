import { Subject, type Subscription } from 'rxjs';
import type { AgUiEvent } from '../../core/events/agui-event.js';
import { toAgUi } from '../../core/events/operators/index.js';
import type { SessionEvent } from '../../core/events/session-event.js';

/** The client-facing AG-UI events of one envelope, and its `seq` (the SSE `id:` of the group's last frame). */
export interface FrameGroup {
  readonly seq: number;
  readonly events: readonly AgUiEvent[];
}

/**
 * What a client of one thread sees of a session's envelopes: the AG-UI translation (`toAgUi`),
 * with the client's thread id and run id on RUN_STARTED / RUN_FINISHED and message ids renamed
 * where a run repeats one of an earlier run (providers without message ids reuse `msg-<turn>`;
 * the AG-UI client would append a repeated id's text to the earlier message). Deterministic from
 * the log: the live stream and a replay of the same envelopes (on any server) give the same
 * events, so a client resuming at a `seq` joins seamlessly. Synchronous; one per session.
 */
export class ThreadFrames {
  private readonly input = new Subject<SessionEvent>();
  private readonly translated: Subscription;
  private group: AgUiEvent[] = [];
  /** Message ids already shown in this thread (as sent, renamed or not). */
  private readonly shown = new Set<string>();
  /** The current run's session message id → client message id. */
  private renames = new Map<string, string>();
  /** The client run id of the run in progress (the session's own when the client's is unknown). */
  private runId: string | undefined;
  /** The session's own id of the run in progress. */
  private logRunId: string | undefined;

  /**
   * @param threadId The client's thread id, put on RUN_STARTED / RUN_FINISHED.
   * @param clientRunId The client's run id for the run the log's `runId` starts (undefined: keep the log's).
   */
  constructor(
    private readonly threadId: string,
    private readonly clientRunId: (logRunId: string) => string | undefined,
  ) {
    this.translated = this.input.pipe(toAgUi()).subscribe((ev) => this.group.push(this.rewrite(ev)));
  }

  /** The client run id of the run in progress (the session's own when the client's is unknown). */
  get currentRunId(): string | undefined {
    return this.runId;
  }

  /** The client events of one envelope (often none), in order. */
  push(env: SessionEvent): FrameGroup {
    if (env.source === 'agentrx' && env.raw.type === 'agentrx.run_started') {
      this.logRunId = env.raw.runId;
      this.runId = this.clientRunId(env.raw.runId) ?? env.raw.runId;
      this.renames = new Map();
    }
    return { seq: env.seq, events: this.drain(() => this.input.next(env)) };
  }

  /**
   * The session's request goes on in the client's run `runId` (a run that answered what the
   * previous one left waiting): RUN_FINISHED carries that id from now on. Returns the session's
   * id of that run.
   */
  continueAs(runId: string): string | undefined {
    this.runId = runId;
    return this.logRunId;
  }

  /** The envelopes ended (the session closed): a RUN_ERROR for a run left open, if any. */
  complete(): readonly AgUiEvent[] {
    return this.drain(() => this.input.complete());
  }

  /** Stops translating. */
  dispose(): void {
    this.translated.unsubscribe();
  }

  private drain(feed: () => void): AgUiEvent[] {
    this.group = [];
    feed();
    const events = this.group;
    this.group = [];
    return events;
  }

  private rewrite(ev: AgUiEvent): AgUiEvent {
    switch (ev.type) {
      case 'RUN_STARTED':
      case 'RUN_FINISHED':
        return { ...ev, threadId: this.threadId, runId: this.runId ?? ev.runId };
      case 'TEXT_MESSAGE_START':
      case 'TEXT_MESSAGE_CONTENT':
      case 'TEXT_MESSAGE_END':
        return { ...ev, messageId: this.clientMessageId(ev.messageId) };
      default:
        return ev;
    }
  }

  private clientMessageId(id: string): string {
    let mapped = this.renames.get(id);
    if (mapped === undefined) {
      mapped = this.shown.has(id) ? `${id}@${this.runId ?? 'run'}` : id;
      this.renames.set(id, mapped);
      this.shown.add(mapped);
    }
    return mapped;
  }
}

/** True for the events that end a run on the wire. */
export function isTerminal(ev: AgUiEvent): boolean {
  return ev.type === 'RUN_FINISHED' || ev.type === 'RUN_ERROR';
}
