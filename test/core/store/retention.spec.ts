import { jest } from '@jest/globals';
import { MemoryLogger } from '../../../src/core/logger.js';
import { StoreRetentionConfig } from '../../../src/core/config/agentrx.config.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import { retentionFromConfig, selectForPrune, startRetention, type PrunableSessionStore, type PruneOptions } from '../../../src/core/store/retention.js';
import { SessionStoreFixtures as F } from './session-store.fixtures.js';

/** A prunable store that answers each pass from a script and records the options it got. */
class ScriptedPrunableStore implements PrunableSessionStore {
  readonly calls: PruneOptions[] = [];
  private waiters: (() => void)[] = [];
  constructor(private readonly script: (() => Promise<string[]>)[]) {}

  prune(options: PruneOptions): Promise<string[]> {
    this.calls.push(options);
    const step = this.script.shift() ?? (async () => []);
    const result = step();
    // Wake the waiters once the pass has settled and been logged.
    const wake = (): void => {
      setImmediate(() => {
        const waiters = this.waiters;
        this.waiters = [];
        waiters.forEach((w) => w());
      });
    };
    void result.then(wake, wake);
    return result;
  }

  /** Resolves once the pass in progress (or the next one) settled. */
  nextPass(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

describe('selectForPrune', () => {
  const sessions = [
    { sessionId: 'a', updatedAt: 10 },
    { sessionId: 'b', updatedAt: 30 },
    { sessionId: 'c', updatedAt: 20 },
  ];

  it('should pick the oldest beyond maxSessions, oldest first', () => {
    expect(selectForPrune(sessions, { maxSessions: 1 })).toEqual(['a', 'c']);
  });

  it('should pick those older than maxAgeMs', () => {
    expect(selectForPrune(sessions, { maxAgeMs: 15, now: 40 })).toEqual(['a', 'c']);
    expect(selectForPrune(sessions, { maxAgeMs: 25, now: 40 })).toEqual(['a']);
  });

  it('should pick the union of both rules', () => {
    expect(selectForPrune(sessions, { maxSessions: 2, maxAgeMs: 25, now: 40 })).toEqual(['a']);
    expect(selectForPrune(sessions, { maxSessions: 2, maxAgeMs: 5, now: 40 })).toEqual(['a', 'c', 'b']);
  });

  it('should pick nothing without rules', () => {
    expect(selectForPrune(sessions, {})).toEqual([]);
  });
});

describe('retentionFromConfig', () => {
  it('should turn days into milliseconds', () => {
    const config = Object.assign(new StoreRetentionConfig(), { maxAgeDays: 2, maxSessions: 5, intervalMs: 60_000 });
    expect(retentionFromConfig(config)).toEqual({ maxAgeMs: 2 * 86_400_000, maxSessions: 5, intervalMs: 60_000 });
  });

  it('should give undefined when nothing would be deleted', () => {
    expect(retentionFromConfig(undefined)).toBeUndefined();
    expect(retentionFromConfig(Object.assign(new StoreRetentionConfig(), { intervalMs: 60_000 }))).toBeUndefined();
  });
});

describe('startRetention', () => {
  let logger: MemoryLogger;
  beforeEach(() => {
    logger = new MemoryLogger();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  describe('when started with a rule', () => {
    it('should prune at once, log what it deleted, and prune again every intervalMs until stopped', async () => {
      jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
      const store = new ScriptedPrunableStore([async () => ['s1', 's2'], async () => []]);
      const first = store.nextPass();
      const handle = startRetention(store, { maxSessions: 3, intervalMs: 5_000 }, logger);
      await first;
      expect(store.calls).toEqual([{ maxAgeMs: undefined, maxSessions: 3 }]);
      expect(logger.lines).toEqual([{ level: 'info', message: 'session store retention deleted 2 session(s)', fields: { sessionIds: ['s1', 's2'] } }]);
      const second = store.nextPass();
      jest.advanceTimersByTime(5_000);
      await second;
      expect(store.calls).toHaveLength(2);
      handle.stop();
      jest.advanceTimersByTime(50_000);
      expect(store.calls).toHaveLength(2);
    });
  });

  describe('when a pass fails', () => {
    it('should log a warning and run the next pass as planned', async () => {
      jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
      const store = new ScriptedPrunableStore([async () => Promise.reject(new Error('disk gone')), async () => ['s1']]);
      const first = store.nextPass();
      const handle = startRetention(store, { maxAgeMs: 1_000, intervalMs: 1_000 }, logger);
      await first;
      expect(logger.lines).toEqual([{ level: 'warn', message: 'session store retention failed: disk gone' }]);
      const second = store.nextPass();
      jest.advanceTimersByTime(1_000);
      await second;
      expect(logger.lines[1]).toEqual(expect.objectContaining({ level: 'info' }));
      handle.stop();
    });
  });

  describe('when a pass is still running at the next tick', () => {
    it('should not start another one', async () => {
      jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
      let finish!: (ids: string[]) => void;
      const store = new ScriptedPrunableStore([() => new Promise<string[]>((resolve) => (finish = resolve))]);
      const handle = startRetention(store, { maxSessions: 1, intervalMs: 1_000 }, logger);
      jest.advanceTimersByTime(3_000);
      expect(store.calls).toHaveLength(1);
      const done = store.nextPass();
      finish([]);
      await done;
      handle.stop();
    });
  });

  describe('when no rule is set', () => {
    it('should never prune', () => {
      jest.useFakeTimers();
      const store = new ScriptedPrunableStore([]);
      const handle = startRetention(store, { intervalMs: 1_000 }, logger);
      jest.advanceTimersByTime(10_000);
      expect(store.calls).toEqual([]);
      handle.stop();
    });
  });

  describe('when run on a real store', () => {
    it('should delete its old sessions', async () => {
      const store = new MemorySessionStore();
      await store.save(F.record('old', { updatedAt: 1 }));
      await store.save(F.record('new', { updatedAt: Date.now() }));
      const passed = new Promise<void>((resolve) => {
        const prune = store.prune.bind(store);
        store.prune = async (o) => {
          const ids = await prune(o);
          resolve();
          return ids;
        };
      });
      const handle = startRetention(store, { maxAgeMs: 60_000 }, logger);
      await passed;
      handle.stop();
      expect((await store.list()).map((r) => r.sessionId)).toEqual(['new']);
    });
  });
});
