import type { Subscription } from 'rxjs';
import { toAgentRxError } from '../errors.js';
import type { RawEvent } from '../model.js';
import type { TurnProvider } from '../plugin/agent-provider.js';
import { abortReason } from '../util/async.js';
import type { Logger } from '../logger.js';
import { releaseConn, type HostLink, type HostLinkEvents } from './host-link.js';
import type { Ingestion } from './ingestion.js';

/**
 * The link to a request/response host: each input is one `pollTurn`, whose events go through
 * ingestion as they arrive; the end of the batch closes the turn. Nothing arrives unprompted and
 * there is nothing to re-attach.
 */
export class TurnPoller implements HostLink {
  readonly unprompted = false;
  readonly hostMidTurn = false;

  constructor(
    private readonly provider: TurnProvider,
    private readonly conn: () => unknown,
    private readonly ingestion: Ingestion,
    private readonly events: HostLinkEvents,
    private readonly logger: Logger,
  ) {}

  /** On a resume, reports the tool uses the restored history still owes the model (a redrive before the prompt). */
  connect(resumed: boolean): Promise<void> {
    const pending = resumed ? (this.provider.unansweredToolUses?.(this.conn()) ?? []) : [];
    if (pending.length > 0) this.events.recovered({ missed: [], pending });
    return Promise.resolve();
  }

  async send(input: unknown, signal: AbortSignal): Promise<void> {
    this.events.turn(await this.poll(input, signal));
  }

  terminalReached(): void {}

  release(): Promise<void> {
    return releaseConn(this.provider, this.conn(), this.logger);
  }

  /** One turn: resolves with the batch's new (not duplicate) events; unsubscribes on abort. */
  private poll(input: unknown, signal: AbortSignal): Promise<RawEvent[]> {
    const batch: RawEvent[] = [];
    return new Promise<RawEvent[]>((resolve, reject) => {
      if (signal.aborted) {
        reject(abortReason(signal));
        return;
      }
      const live: { sub?: Subscription } = {};
      let settled = false;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        return true;
      };
      const onAbort = (): void => {
        if (!settle()) return;
        live.sub?.unsubscribe();
        reject(abortReason(signal));
      };
      // Listen before subscribing: a provider may complete synchronously inside subscribe().
      signal.addEventListener('abort', onAbort, { once: true });
      live.sub = this.provider.pollTurn(this.conn(), input).subscribe({
        next: (ev) => {
          if (this.ingestion.ingest(ev)) batch.push(ev);
        },
        error: (e: unknown) => {
          if (settle()) reject(toAgentRxError(e));
        },
        complete: () => {
          if (settle()) resolve(batch);
        },
      });
      if (settled) live.sub.unsubscribe();
    });
  }
}
