import type { AgUiEvent } from '../../core/events/agui-event.js';
import type { TranslatedEnvelope } from './agui-http.translation.js';

/** The client-facing AG-UI events of one envelope, and its `seq` (the SSE `id:` of the group's last frame; none for the end's). */
export interface FrameGroup {
  readonly seq: number | undefined;
  readonly events: readonly AgUiEvent[];
}

/**
 * What a client of one thread sees of a session's AG-UI events: the client's thread id and run id
 * on RUN_STARTED / RUN_FINISHED, and message ids renamed where a run repeats one of an earlier run
 * (providers without message ids reuse `msg-<turn>`; the AG-UI client would append a repeated id's
 * text to the earlier message). Deterministic from the log: the live stream and a replay of the
 * same envelopes (on any server) give the same events, so a client resuming at a `seq` joins
 * seamlessly. Synchronous; one per reader of a session.
 */
export class ThreadFrames {
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
  ) {}

  /** The client run id of the run in progress (the session's own when the client's is unknown). */
  get currentRunId(): string | undefined {
    return this.runId;
  }

  /** The client events of one translated envelope (often none), in order. */
  push({ envelope, agui }: TranslatedEnvelope): FrameGroup {
    if (envelope?.source === 'agentrx' && envelope.raw.type === 'agentrx.run_started') {
      this.logRunId = envelope.raw.runId;
      this.runId = this.clientRunId(envelope.raw.runId) ?? envelope.raw.runId;
      this.renames = new Map();
    }
    return { seq: envelope?.seq, events: agui.length === 0 ? agui : agui.map((ev) => this.rewrite(ev)) };
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
