import { jest } from '@jest/globals';
import { Kernel, type Participant } from '../../../src/core/kernel/kernel.js';
import { PluginRegistry } from '../../../src/core/kernel/plugin-registry.js';
import { ProviderCatalog } from '../../../src/core/kernel/provider-catalog.js';
import type { AgentProvider } from '../../../src/core/plugin/agent-provider.js';
import { MemoryLogger } from '../../../src/core/logger.js';

function participant(id: string, log: string[], behaviour: { startThrows?: boolean; stopHangs?: boolean } = {}): Participant {
  return {
    id,
    start: () => {
      log.push(`start ${id}`);
      if (behaviour.startThrows) throw new Error(`${id} cannot start`);
    },
    stop: () => {
      log.push(`stop ${id}`);
      return behaviour.stopHangs ? new Promise<void>(() => undefined) : undefined;
    },
  };
}

function hangs(): Promise<void> {
  return new Promise<void>(() => undefined);
}

describe('Kernel', () => {
  describe('.start and .stop', () => {
    describe('when every participant behaves', () => {
      it('should start phases in order and stop them in reverse, once', async () => {
        const log: string[] = [];
        const cleanup = jest.fn(async () => undefined);
        const k = new Kernel(
          [
            { name: 'tools', participants: [participant('t1', log), participant('t2', log)], timeoutMs: 1000 },
            { name: 'providers', participants: [participant('p1', log)], timeoutMs: 1000 },
          ],
          new MemoryLogger(),
          { run: cleanup, timeoutMs: 1000 },
        );
        await k.start();
        await Promise.all([k.stop(), k.stop()]);
        await k.stop();
        expect(log).toEqual(['start t1', 'start t2', 'start p1', 'stop p1', 'stop t2', 'stop t1']);
        expect(cleanup).toHaveBeenCalledTimes(1);
      });
    });

    describe('when one participant throws on start and another hangs on stop', () => {
      beforeEach(() => jest.useFakeTimers());
      afterEach(() => jest.useRealTimers());
      it('should still run the others, log both failures and finish stop at the phase timeout', async () => {
        const log: string[] = [];
        const logger = new MemoryLogger();
        const k = new Kernel(
          [
            {
              name: 'tools',
              participants: [participant('bad', log, { startThrows: true }), participant('hang', log, { stopHangs: true }), participant('ok', log)],
              timeoutMs: 500,
            },
          ],
          logger,
        );
        await k.start();
        const stopping = k.stop();
        await jest.advanceTimersByTimeAsync(500);
        await stopping;
        expect(log).toEqual(['start bad', 'start hang', 'start ok', 'stop ok', 'stop hang', 'stop bad']);
        expect(logger.lines.map((l) => l.message)).toEqual(['start tools: bad failed', 'stop tools: hang failed']);
      });
    });

    describe('when each phase has its own timeout and a participant of each hangs on start', () => {
      beforeEach(() => jest.useFakeTimers());
      afterEach(() => jest.useRealTimers());
      it("should give up on each phase at its own timeout, not the other phase's", async () => {
        const logger = new MemoryLogger();
        const k = new Kernel(
          [
            { name: 'tools', participants: [{ id: 'slow-tool', start: hangs }], timeoutMs: 300 },
            { name: 'providers', participants: [{ id: 'slow-provider', start: hangs }], timeoutMs: 2000 },
          ],
          logger,
        );
        let started = false;
        const starting = k.start().then(() => (started = true));
        await jest.advanceTimersByTimeAsync(299);
        expect(logger.lines).toEqual([]);
        await jest.advanceTimersByTimeAsync(1);
        expect(logger.lines.map((l) => l.message)).toEqual(['start tools: slow-tool failed']);
        await jest.advanceTimersByTimeAsync(1999);
        expect(started).toBe(false);
        await jest.advanceTimersByTimeAsync(1);
        await starting;
        expect(logger.lines.map((l) => l.message)).toEqual(['start tools: slow-tool failed', 'start providers: slow-provider failed']);
        expect(logger.lines[1]?.fields).toEqual({ error: 'start providers did not settle within 2000 ms' });
      });
    });

    describe('when a participant declares a start timeout longer than its phase', () => {
      beforeEach(() => jest.useFakeTimers());
      afterEach(() => jest.useRealTimers());
      it("should bound its start by its own timeout, the others' by the phase's, and its stop by the phase's", async () => {
        const logger = new MemoryLogger();
        const k = new Kernel(
          [
            {
              name: 'tools',
              participants: [
                { id: 'patient', startTimeoutMs: 2000, start: hangs, stop: hangs },
                { id: 'modest', startTimeoutMs: 100, start: hangs },
                { id: 'plain', start: hangs },
              ],
              timeoutMs: 300,
            },
          ],
          logger,
        );
        let started = false;
        const starting = k.start().then(() => (started = true));
        await jest.advanceTimersByTimeAsync(1999);
        expect(started).toBe(false);
        await jest.advanceTimersByTimeAsync(1);
        await starting;
        // A declared timeout shorter than the phase's does not shorten it.
        expect(logger.lines.map((l) => [l.message, l.fields])).toEqual([
          ['start tools: patient failed', { error: 'start tools did not settle within 2000 ms' }],
          ['start tools: modest failed', { error: 'start tools did not settle within 300 ms' }],
          ['start tools: plain failed', { error: 'start tools did not settle within 300 ms' }],
        ]);

        const stopping = k.stop();
        await jest.advanceTimersByTimeAsync(300);
        await stopping;
        expect(logger.lines.at(-1)).toEqual({
          level: 'error',
          message: 'stop tools: patient failed',
          fields: { error: 'stop tools did not settle within 300 ms' },
        });
      });
    });

    describe('when the cleanup hangs', () => {
      beforeEach(() => jest.useFakeTimers());
      afterEach(() => jest.useRealTimers());
      it('should log it and finish stop at the cleanup timeout', async () => {
        const logger = new MemoryLogger();
        const k = new Kernel([{ name: 'tools', participants: [], timeoutMs: 100 }], logger, { run: hangs, timeoutMs: 750 });
        await k.start();
        let stopped = false;
        const stopping = k.stop().then(() => (stopped = true));
        await jest.advanceTimersByTimeAsync(749);
        expect(stopped).toBe(false);
        await jest.advanceTimersByTimeAsync(1);
        await stopping;
        expect(logger.lines.map((l) => [l.message, l.fields])).toEqual([['kernel cleanup failed', { error: 'cleanup did not settle within 750 ms' }]]);
      });
    });

    describe('when the cleanup throws synchronously', () => {
      it('should log it and still resolve stop', async () => {
        const logger = new MemoryLogger();
        const k = new Kernel([], logger, {
          run: () => {
            throw new Error('unbind failed');
          },
          timeoutMs: 100,
        });
        await expect(k.stop()).resolves.toBeUndefined();
        expect(logger.lines.map((l) => [l.message, l.fields])).toEqual([['kernel cleanup failed', { error: 'unbind failed' }]]);
      });
    });

    describe('when stop is called without start', () => {
      it('should stop no participant but still run the cleanup', async () => {
        const log: string[] = [];
        const cleanup = jest.fn(async () => undefined);
        const k = new Kernel([{ name: 'tools', participants: [participant('t1', log)], timeoutMs: 100 }], new MemoryLogger(), { run: cleanup, timeoutMs: 100 });
        await k.stop();
        expect(log).toEqual([]);
        expect(cleanup).toHaveBeenCalledTimes(1);
      });
    });
  });
});

describe('ProviderCatalog.ready', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  describe('when a provider built after start-up declares a start timeout longer than the providers phase', () => {
    it('should bound its start by its own timeout', async () => {
      const logger = new MemoryLogger();
      const slow = { id: 'slow', startTimeoutMs: 2000, start: hangs } as unknown as AgentProvider;
      const catalog = new ProviderCatalog([{ id: 'slow', service: class Slow {} as never }], [], () => slow, 300, logger);
      catalog.markStarted();
      let ready = false;
      const readying = catalog.ready(catalog.require('slow')).then(() => (ready = true));
      await jest.advanceTimersByTimeAsync(1999);
      expect(ready).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      await readying;
      expect(logger.lines.filter((l) => l.level === 'error').map((l) => [l.message, l.fields])).toEqual([
        ['start provider slow failed', { error: 'start provider slow did not settle within 2000 ms' }],
      ]);
    });
  });
});

describe('PluginRegistry', () => {
  describe('constructor', () => {
    describe('when two plugins share an id', () => {
      it('should name both classes in a duplicate_plugin error', () => {
        class FirstConsumer {
          readonly id = 'x';
        }
        class SecondConsumer {
          readonly id = 'x';
        }
        expect(() => new PluginRegistry('consumer', [new FirstConsumer(), new SecondConsumer()], (p) => p.id)).toThrow(
          expect.objectContaining({ code: 'duplicate_plugin', message: expect.stringMatching(/FirstConsumer and SecondConsumer/) }),
        );
      });
    });
  });

  describe('.require', () => {
    it('should list the known ids when the id is unknown', () => {
      const r = new PluginRegistry('provider', [{ id: 'local' }, { id: 'other' }], (p) => p.id);
      expect(() => r.require('nope')).toThrow(expect.objectContaining({ code: 'unknown_plugin', message: expect.stringContaining('known: local, other') }));
      expect(r.require('local')).toEqual({ id: 'local' });
    });
  });
});
