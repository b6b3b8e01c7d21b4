import { take, toArray, lastValueFrom } from 'rxjs';
import type { SessionEvent } from '../../../src/core/events/session-event.js';
import type { LiveSession } from '../../../src/core/plugin/live-session.js';
import type { SessionOptions } from '../../../src/core/plugin/session-options.js';
import { InProcessPlacement } from '../../../src/core/session/in-process-placement.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';

/** A factory that records what it was asked to start, and returns a stand-in (the placement never touches it). */
function recordingFactory(): { started: SessionOptions[]; start(opts: SessionOptions): LiveSession } {
  const started: SessionOptions[] = [];
  return {
    started,
    start: (opts) => {
      started.push(opts);
      return { sessionId: `s-${started.length}` } as Partial<LiveSession> as LiveSession;
    },
  };
}

const envelope = (seq: number): SessionEvent => ({
  seq,
  sessionId: 'sess',
  turn: 0,
  provider: 'fake',
  source: 'agentrx',
  raw: { type: 'agentrx.text_delta', text: `t${seq}`, messageId: 'm' },
  at: seq,
});

describe('InProcessPlacement', () => {
  describe('.open', () => {
    it('should start the session with every option as given, functions and tools included', async () => {
      const factory = recordingFactory();
      const placement = new InProcessPlacement(factory, new MemorySessionStore());
      const confirmTool = (): boolean => true;
      const opts: SessionOptions = { prompt: 'hi', threadId: 't-1', confirmTool, tools: [] };
      const session = await placement.open(opts);
      expect(session.sessionId).toBe('s-1');
      expect(factory.started).toEqual([opts]);
      expect(factory.started[0]!.confirmTool).toBe(confirmTool);
    });

    it('should reject with what start throws', async () => {
      const placement = new InProcessPlacement(
        {
          start: () => {
            throw new Error('stopped');
          },
        },
        new MemorySessionStore(),
      );
      await expect(placement.open({ prompt: 'hi' })).rejects.toThrow('stopped');
    });
  });

  describe('.checkOptions', () => {
    it('should refuse nothing', () => {
      const placement = new InProcessPlacement(recordingFactory(), new MemorySessionStore());
      expect(() => placement.checkOptions({ confirmTool: () => true, turnGuard: () => false, signal: new AbortController().signal })).not.toThrow();
    });
  });

  describe('.find', () => {
    it('should find no session elsewhere', async () => {
      const placement = new InProcessPlacement(recordingFactory(), new MemorySessionStore());
      await expect(placement.find('t-1')).resolves.toBeUndefined();
    });
  });

  describe('.attach', () => {
    it("should read the store's log after afterSeq, then what is appended", async () => {
      const store = new MemorySessionStore();
      await store.append('sess', [envelope(1), envelope(2)]);
      const placement = new InProcessPlacement(recordingFactory(), store);
      const read = lastValueFrom(placement.attach('sess', { afterSeq: 1 }).events$.pipe(take(2), toArray()));
      await store.append('sess', [envelope(3)]);
      expect((await read).map((e) => e.seq)).toEqual([2, 3]);
    });
  });

  describe('.follow and .followed', () => {
    it('should count the readers of a thread until each is released (once)', async () => {
      const placement = new InProcessPlacement(recordingFactory(), new MemorySessionStore());
      const a = placement.follow('t-1');
      const b = placement.follow('t-1');
      expect(await placement.followed('t-1')).toBe(true);
      expect(await placement.followed('t-2')).toBe(false);
      a();
      a();
      expect(await placement.followed('t-1')).toBe(true);
      b();
      expect(await placement.followed('t-1')).toBe(false);
    });
  });

  describe('.health and .close', () => {
    it('should be healthy with no checks, and close with nothing to let go of', async () => {
      const placement = new InProcessPlacement(recordingFactory(), new MemorySessionStore());
      await expect(placement.health()).resolves.toEqual({ healthy: true, checks: {} });
      await expect(placement.close()).resolves.toBeUndefined();
    });
  });
});
