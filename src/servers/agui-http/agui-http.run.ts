import type { ClientFrame, RunMessages } from './agui-http.messages.js';
import type { HeaderMap } from './agui-http.reply.js';
import type { AgUiEventStream } from './agui-http.stream.js';

/**
 * One run of a client, streamed to one response. Its session may emit before the response's head
 * is sent (a session takes the run's message before the stream opens): what is written until
 * `open` is held, then sent in order.
 */
export class Run {
  /** RUN_STARTED went out (a stream starts with it, or is a lone RUN_ERROR). */
  started = false;
  /** The run reached its end (terminal, suspension, abandonment): it no longer counts. */
  done = false;
  /** The client went away; the run goes on for `reconnectGraceMs`, then is cancelled. */
  detached = false;
  graceTimer: NodeJS.Timeout | undefined;
  /** Reconnected readers following this run (they hold off the grace timer). */
  followers = 0;
  /** Called once the run stops counting: requests of the thread waiting for it. */
  readonly whenOver: (() => void)[] = [];
  /**
   * Set for a run that continues the session's request a suspended run left waiting: called once
   * the stream is open (after RUN_STARTED), it hands the client's answers to the session.
   */
  continueWith: (() => void) | undefined;
  /** Writes held until the stream opens (undefined once it has). */
  private held: (() => void)[] | undefined = [];

  /**
   * @param runId The client's run id.
   * @param client The client address it counts against (`maxRunsPerClient`).
   * @param messages The conversation as the client will hold it at the run's end (its MESSAGES_SNAPSHOT).
   */
  constructor(
    readonly runId: string,
    private readonly stream: AgUiEventStream,
    readonly client: string,
    readonly messages: RunMessages,
  ) {}

  /** Sends the response's head (with `headers`), then what was written meanwhile. */
  open(headers: HeaderMap): void {
    this.stream.open(headers);
    const held = this.held ?? [];
    this.held = undefined;
    for (const write of held) write();
  }

  /** Writes the frames of one envelope in one chunk (see `AgUiEventStream.writeGroup`). */
  writeGroup(events: readonly ClientFrame[], seq: number | undefined): void {
    if (this.held) this.held.push(() => this.stream.writeGroup(events, seq));
    else this.stream.writeGroup(events, seq);
  }

  /** Writes one frame with no id. */
  write(ev: ClientFrame): void {
    if (this.held) this.held.push(() => this.stream.write(ev));
    else this.stream.write(ev);
  }

  /** Ends the response (once what was written before has gone out). */
  end(): void {
    if (this.held) this.held.push(() => this.stream.end());
    else this.stream.end();
  }

  /** The response closed under the run: stops its keep-alive; nothing held goes out. */
  stop(): void {
    this.held = undefined;
    this.stream.stop();
  }
}
