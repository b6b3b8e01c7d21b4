import { jest } from '@jest/globals';
import { Kernel, type Participant } from '../../../src/core/kernel/kernel.js';
import { PluginRegistry } from '../../../src/core/kernel/plugin-registry.js';
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

describe('Kernel', () => {
  describe('.start and .stop', () => {
    describe('when every participant behaves', () => {
      it('should start phases in order and stop them in reverse, once', async () => {
        const log: string[] = [];
        const cleanup = jest.fn(async () => undefined);
        const k = new Kernel([['tools', [participant('t1', log), participant('t2', log)]], ['providers', [participant('p1', log)]]], new MemoryLogger(), 1000, cleanup);
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
        const k = new Kernel([['tools', [participant('bad', log, { startThrows: true }), participant('hang', log, { stopHangs: true }), participant('ok', log)]]], logger, 500);
        await k.start();
        const stopping = k.stop();
        await jest.advanceTimersByTimeAsync(500);
        await stopping;
        expect(log).toEqual(['start bad', 'start hang', 'start ok', 'stop ok', 'stop hang', 'stop bad']);
        expect(logger.lines.map((l) => l.message)).toEqual(['start tools: bad failed', 'stop tools: hang failed']);
      });
    });
  });
});

describe('PluginRegistry', () => {
  describe('constructor', () => {
    describe('when two plugins share an id', () => {
      it('should name both classes in a duplicate_plugin error', () => {
        class FirstConsumer { readonly id = 'x'; }
        class SecondConsumer { readonly id = 'x'; }
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
