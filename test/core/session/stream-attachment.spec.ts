import { Observable, Subject } from 'rxjs';
import { AgentRxError } from '../../../src/core/errors.js';
import { MemoryLogger } from '../../../src/core/logger.js';
import type { ToolUse } from '../../../src/core/model.js';
import type { IngestCursor, Reconnected, StreamingProvider, StreamItem } from '../../../src/core/plugin/agent-provider.js';
import { StreamAttachment } from '../../../src/core/session/stream-attachment.js';
import { agentrxTypes, RecordingLinkEvents, recordingIngestion, TestProviderBase } from './session-parts.fixtures.js';

/** A streaming host driven by hand: each attachment is a Subject the test pushes into (`idle` ends a turn: see `recordingIngestion`). */
class ManualHost extends TestProviderBase implements StreamingProvider<unknown, unknown> {
  readonly id = 'manual';
  readonly mode = 'streaming' as const;
  readonly calls: string[] = [];
  readonly streams: Subject<StreamItem>[] = [];
  /** What the next `reconnect` does (called with the stream just attached). */
  onReconnect: (cursor: IngestCursor, live: Subject<StreamItem>) => Promise<Reconnected> = async () => ({ missed: [], pending: [] });
  /** Attachments from this number on fail before they open. */
  failFrom = Infinity;
  interrupt?: (conn: unknown, signal: AbortSignal) => Promise<void>;

  stream(): Observable<StreamItem> {
    return new Observable<StreamItem>((sub) => {
      const n = this.streams.length + 1;
      this.calls.push(`attach ${n}`);
      const live = new Subject<StreamItem>();
      this.streams.push(live);
      if (n >= this.failFrom) {
        sub.error(new AgentRxError('stream_error', `attach ${n} refused`));
        return undefined;
      }
      const inner = live.subscribe(sub);
      sub.next({ kind: 'open' });
      return () => inner.unsubscribe();
    });
  }
  reconnect(_conn: unknown, cursor: IngestCursor): Promise<Reconnected> {
    this.calls.push('reconnect');
    return this.onReconnect(cursor, this.streams.at(-1)!);
  }
  async pushInput(): Promise<void> {}
  close(): void {
    this.calls.push('close');
  }
}

const event = (id: string, type = 'text'): StreamItem => ({ kind: 'event', event: { id, type, text: id } });
const use: ToolUse = { id: 'u1', name: 'echo', input: {} };

function setup(host: ManualHost, opts: { live?: boolean; reconnectAttempts?: number; interruptTimeoutMs?: number } = {}) {
  const { ingestion, envs } = recordingIngestion();
  const events = new RecordingLinkEvents();
  const ctrl = new AbortController();
  const link = new StreamAttachment(
    host,
    () => 'conn',
    ingestion,
    events,
    { live: opts.live ?? false, reconnectAttempts: opts.reconnectAttempts ?? 3, reconnectBaseMs: 1, interruptTimeoutMs: opts.interruptTimeoutMs ?? 2_000 },
    ctrl.signal,
    new MemoryLogger(),
  );
  const ids = (): unknown[] => envs.flatMap((e) => (e.source === 'provider' ? [e.raw['id']] : []));
  return { link, events, envs, ids, ctrl };
}

describe('StreamAttachment', () => {
  describe('.connect', () => {
    describe('when the stream drops and live events arrive on the new stream before history is listed', () => {
      it('should re-attach before listing history, feed the missed history before the held live events, then report what is pending', async () => {
        const host = new ManualHost();
        const { link, events, envs, ids } = setup(host);
        await link.connect(false, new AbortController().signal);
        host.streams[0]!.next(event('e1'));
        host.onReconnect = async (cursor, live) => {
          live.next(event('e4')); // live, on the new stream, while history is being listed
          expect(cursor.has('e1')).toBe(true);
          return {
            missed: [
              { id: 'e2', type: 'text' },
              { id: 'e3', type: 'text' },
            ],
            pending: [use],
          };
        };
        host.streams[0]!.error(new AgentRxError('stream_error', 'socket reset'));
        await events.until(() => events.recoveries.length === 1);
        expect(host.calls).toEqual(['attach 1', 'attach 2', 'reconnect']);
        expect(ids()).toEqual(['e1', 'e2', 'e3', 'e4']);
        expect(events.recoveries).toEqual([{ pending: ['u1'], missed: 2 }]);
        expect(agentrxTypes(envs).filter((t) => t.startsWith('agentrx.reconnect'))).toEqual(['agentrx.reconnecting', 'agentrx.reconnected']);
      });
    });

    describe('when a session is resumed', () => {
      it('should hold live events until the history was fed, and report the recovery before resolving', async () => {
        const host = new ManualHost();
        const { link, events, ids } = setup(host);
        host.onReconnect = async (_cursor, live) => {
          live.next(event('live'));
          return { missed: [{ id: 'old', type: 'text' }], pending: [], midTurn: true };
        };
        await link.connect(true, new AbortController().signal);
        expect(ids()).toEqual(['old', 'live']);
        expect([events.recoveries.length, link.hostMidTurn]).toEqual([1, true]);
      });
    });

    describe('when the first attachment fails before it opens', () => {
      it('should reject with stream_error instead of reconnecting', async () => {
        const host = new ManualHost();
        host.failFrom = 1;
        const { link } = setup(host);
        await expect(link.connect(false, new AbortController().signal)).rejects.toMatchObject({
          code: 'stream_error',
          message: expect.stringContaining('before it opened'),
        });
        expect(host.calls).toEqual(['attach 1']);
      });
    });
  });

  describe('reconnecting', () => {
    describe('when reconnect fails with a non-retryable error', () => {
      it('should report the failure once without retrying', async () => {
        const host = new ManualHost();
        const { link, events } = setup(host);
        await link.connect(false, new AbortController().signal);
        host.onReconnect = async () => {
          throw new AgentRxError('provider_error', 'cannot place the cursor', { retryable: false });
        };
        host.streams[0]!.complete();
        await events.until(() => events.failures.length > 0);
        expect(events.failures).toEqual([expect.objectContaining({ code: 'provider_error' })]);
        expect(host.calls.filter((c) => c === 'reconnect')).toHaveLength(1);
      });
    });

    describe('when every re-attachment of a run fails', () => {
      it('should give up after reconnectAttempts with a stream_error naming them', async () => {
        const host = new ManualHost();
        const { link, events, envs } = setup(host, { reconnectAttempts: 2 });
        await link.connect(false, new AbortController().signal);
        host.failFrom = 2;
        host.streams[0]!.error(new Error('gone'));
        await events.until(() => events.failures.length > 0);
        expect(events.failures[0]).toMatchObject({ code: 'stream_error', message: expect.stringContaining('2 reconnect attempts failed') });
        expect(host.calls).toEqual(['attach 1', 'attach 2', 'attach 3']);
        expect(agentrxTypes(envs).filter((t) => t === 'agentrx.reconnecting')).toHaveLength(2);
      });
    });

    describe('when the session is aborted during the backoff', () => {
      it('should stop without attaching again or reporting a failure', async () => {
        const host = new ManualHost();
        const { link, events, envs, ctrl } = setup(host, { live: true });
        await link.connect(false, new AbortController().signal);
        host.streams[0]!.error(new Error('gone'));
        ctrl.abort(new AgentRxError('cancelled', 'the session was cancelled'));
        expect(agentrxTypes(envs)).toEqual(['agentrx.reconnecting']);
        await link.release(false);
        expect(host.calls).toEqual(['attach 1', 'close']);
        expect(events.failures).toEqual([]);
      });
    });
  });

  describe('turns', () => {
    it('should report each turn at its boundary event, and clear the mid-turn flag there', async () => {
      const host = new ManualHost();
      const { link, events } = setup(host);
      host.onReconnect = async () => ({ missed: [], pending: [], midTurn: true });
      await link.connect(true, new AbortController().signal);
      host.streams[0]!.next(event('a'));
      expect([events.turns.length, link.hostMidTurn]).toEqual([0, true]);
      host.streams[0]!.next(event('i1', 'idle'));
      expect(events.turns.map((t) => t.map((e) => e['id']))).toEqual([['a', 'i1']]);
      expect(link.hostMidTurn).toBe(false);
    });
  });

  describe('.release', () => {
    describe('with interrupt, on a host whose interrupt never answers', () => {
      it('should give up after interruptTimeoutMs, then close the conn, and report nothing more', async () => {
        const host = new ManualHost();
        const seen: AbortSignal[] = [];
        host.interrupt = (_conn, signal) => {
          seen.push(signal);
          return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new AgentRxError('cancelled', 'interrupt aborted'))));
        };
        const { link, events } = setup(host, { interruptTimeoutMs: 20 });
        await link.connect(false, new AbortController().signal);
        await link.release(true);
        host.streams[0]!.error(new Error('late drop'));
        expect(seen[0]!.aborted).toBe(true);
        expect(host.calls).toEqual(['attach 1', 'close']);
        expect(events.failures).toEqual([]);
      });
    });

    it('should not interrupt without the flag', async () => {
      const host = new ManualHost();
      let interrupts = 0;
      host.interrupt = async () => void interrupts++;
      const { link } = setup(host);
      await link.connect(false, new AbortController().signal);
      await link.release(false);
      expect([interrupts, host.calls]).toEqual([0, ['attach 1', 'close']]);
    });
  });
});
