import type { Subscription } from 'rxjs';
import { AgentRxError, toAgentRxError } from '../errors.js';
import type { RawEvent } from '../model.js';
import type { Reconnected, StreamItem, StreamingProvider } from '../plugin/agent-provider.js';
import { abortReason, abortable, sleep } from '../util/async.js';
import { backoffDelay } from '../util/backoff.js';
import type { Logger } from '../logger.js';
import { releaseConn, type HostLink, type HostLinkEvents } from './host-link.js';
import type { HostEvent } from '../plugin/host-event.js';
import type { Ingestion } from './ingestion.js';

/** Reconnect settings of a {@link StreamAttachment}. */
export interface StreamAttachmentOptions {
  /** A live session reconnects for as long as it lives; a run gives up after `reconnectAttempts`. */
  readonly live: boolean;
  readonly reconnectAttempts: number;
  readonly reconnectBaseMs: number;
  /** Bound on the best-effort interrupt of `release(true)`. */
  readonly interruptTimeoutMs: number;
}

/**
 * The link to a streaming host: one stream attachment at a time, each with its own generation
 * (events, errors and closes of a superseded one are ignored). After a drop (an error, or a clean
 * close while the session lives) it backs off, re-attaches **before** listing history, holds the
 * new stream's live events until the history it missed has been fed (older first), then reports
 * what the host still waits on. Turns close on the events the provider decodes as `turn_end`.
 */
export class StreamAttachment implements HostLink {
  readonly unprompted = true;
  private midTurn = false;
  private generation = 0;
  private sub: Subscription | undefined;
  /** The provider events of the turn in progress (since the last `turn_end`). */
  private turn: RawEvent[] = [];
  private attempt = 0;
  private reconnecting = false;
  private closed = false;
  /**
   * While set, stream events are held here instead of ingested: between re-attaching a stream
   * and feeding the history it missed, so history (older) is ingested before live events.
   */
  private holding: RawEvent[] | undefined;

  constructor(
    private readonly provider: StreamingProvider,
    private readonly conn: () => unknown,
    private readonly ingestion: Ingestion,
    private readonly events: HostLinkEvents,
    private readonly opts: StreamAttachmentOptions,
    /** The session's signal: aborting it stops attaching and reconnecting. */
    private readonly signal: AbortSignal,
    private readonly logger: Logger,
  ) {}

  /**
   * `reconnect` said the host is in the middle of a turn (a resume or a re-attach while it runs).
   * Input waits until that turn's boundary, so the boundary is not taken for its answer.
   */
  get hostMidTurn(): boolean {
    return this.midTurn;
  }

  async connect(resumed: boolean, signal: AbortSignal): Promise<void> {
    const recover = resumed && this.provider.reconnect !== undefined;
    // A resume lists history after attaching: hold live events until it has been fed.
    if (recover) this.holding = [];
    await this.attach(signal);
    if (recover) this.events.recovered(await this.recover(signal));
  }

  async send(input: unknown, signal: AbortSignal): Promise<void> {
    await abortable(this.provider.pushInput(this.conn(), input, signal), signal);
  }

  terminalReached(): void {
    this.attempt = 0;
  }

  async release(interrupt: boolean): Promise<void> {
    this.closed = true;
    this.generation++;
    this.sub?.unsubscribe();
    this.turn = [];
    const conn = this.conn();
    if (interrupt && this.provider.interrupt && conn !== undefined) {
      await this.provider
        .interrupt(conn, AbortSignal.timeout(this.opts.interruptTimeoutMs))
        .catch((e: unknown) => this.logger.warn('interrupt failed', { provider: this.provider.id, error: toAgentRxError(e).message }));
    }
    await releaseConn(this.provider, conn, this.logger);
  }

  /** Lists history and feeds what was missed, then the held live events. */
  private async recover(signal: AbortSignal): Promise<Reconnected> {
    const rec: Reconnected = this.provider.reconnect
      ? await abortable(this.provider.reconnect(this.conn(), this.ingestion.cursor(), signal), signal)
      : { missed: [], pending: [] };
    if (rec.midTurn === true) this.midTurn = true;
    for (const ev of rec.missed) this.feed(ev);
    const held = this.holding ?? [];
    this.holding = undefined;
    for (const ev of held) this.feed(ev);
    return rec;
  }

  /**
   * Ingests one provider event into the turn in progress; the event its provider decodes as
   * `turn_end` closes the turn (a duplicate belongs to none).
   */
  private feed(raw: RawEvent): void {
    const host = this.ingestion.ingestDecoded(raw);
    if (host === undefined || this.closed) return;
    this.turn.push(raw);
    if (!endsTurn(host)) return;
    const events = this.turn;
    this.turn = [];
    // A closed turn ends any turn the host was running when the stream was (re)attached.
    this.midTurn = false;
    this.events.turn(events);
  }

  /** Attaches a new stream generation and waits until it is open. */
  private attach(signal: AbortSignal): Promise<void> {
    const gen = ++this.generation;
    this.sub?.unsubscribe();
    return new Promise<void>((resolve, reject) => {
      let opened = false;
      const onAbort = (): void => reject(abortReason(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      const dropped = (reason: string): void => {
        if (gen !== this.generation || this.closed || signal.aborted) return;
        if (!opened) {
          signal.removeEventListener('abort', onAbort);
          reject(new AgentRxError('stream_error', `the event stream failed before it opened: ${reason}`));
          return;
        }
        void this.reconnectLoop(reason);
      };
      this.sub = this.provider.stream(this.conn()).subscribe({
        next: (item: StreamItem) => {
          if (gen !== this.generation) return;
          if (item.kind === 'open') {
            opened = true;
            signal.removeEventListener('abort', onAbort);
            resolve();
          } else if (item.kind === 'event') {
            if (this.holding) this.holding.push(item.event);
            else this.feed(item.event);
          } else this.ingestion.emit({ type: 'agentrx.diagnostic', message: item.message });
        },
        error: (e: unknown) => dropped(toAgentRxError(e, 'stream_error').message),
        complete: () => dropped('the stream closed before the session ended'),
      });
    });
  }

  /**
   * After a drop: back off (exponential, jittered; reset only at a real terminal), re-attach,
   * then recover. A run gives up after `reconnectAttempts`; a non-retryable reconnect error ends
   * the session at once.
   */
  private async reconnectLoop(reason: string): Promise<void> {
    if (this.reconnecting) return;
    this.reconnecting = true;
    const signal = this.signal;
    try {
      for (;;) {
        const attempt = ++this.attempt;
        if (!this.opts.live && attempt > this.opts.reconnectAttempts) {
          this.events.failed(
            new AgentRxError('stream_error', `the event stream dropped and ${this.opts.reconnectAttempts} reconnect attempts failed: ${reason}`),
          );
          return;
        }
        const delayMs = backoffDelay(attempt, { baseMs: this.opts.reconnectBaseMs });
        this.ingestion.emit({ type: 'agentrx.reconnecting', attempt, delayMs, reason });
        try {
          await sleep(delayMs, signal);
          this.holding = [];
          await this.attach(signal);
          const rec = await this.recover(signal);
          this.ingestion.emit({ type: 'agentrx.reconnected', attempt, missed: rec.missed.length, pending: rec.pending.length });
          this.events.recovered(rec);
          return;
        } catch (e) {
          this.holding = undefined;
          if (signal.aborted || this.closed) return;
          const err = toAgentRxError(e, 'stream_error');
          if (err.details?.['retryable'] === false) {
            this.events.failed(err);
            return;
          }
          reason = err.message;
        }
      }
    } finally {
      this.reconnecting = false;
    }
  }
}

/** True for an event its provider decoded as the end of a turn. */
function endsTurn(host: readonly HostEvent[]): boolean {
  for (const h of host) if (h?.kind === 'turn_end') return true;
  return false;
}
