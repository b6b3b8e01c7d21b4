import { getEventListeners } from 'node:events';
import { AgentRxError } from '../../../src/core/errors.js';
import { abortable, abortReason, followAbort, MAX_TIMER_MS, sleep } from '../../../src/core/util/async.js';

/** The settled state of `p` after pending callbacks have run, without waiting for any timer. */
async function stateOf(p: Promise<unknown>): Promise<'pending' | 'resolved' | 'rejected'> {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  p.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  await new Promise<void>((resolve) => setImmediate(resolve));
  return state;
}

describe('abortReason', () => {
  describe('when the signal was aborted with an AgentRxError', () => {
    it('should return that very error', () => {
      const ctrl = new AbortController();
      const reason = new AgentRxError('timeout', 'the run timed out');
      ctrl.abort(reason);
      expect(abortReason(ctrl.signal)).toBe(reason);
    });
  });

  describe('when the signal was aborted by AbortSignal.timeout', () => {
    it('should give a timeout AgentRxError caused by the TimeoutError', async () => {
      const signal = AbortSignal.timeout(0);
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      const e = abortReason(signal);
      expect(e).toBeInstanceOf(AgentRxError);
      expect(e.code).toBe('timeout');
      expect(e.cause).toMatchObject({ name: 'TimeoutError' });
    });
  });

  describe('when the signal was aborted with anything else', () => {
    it('should give a cancelled AgentRxError caused by the reason', () => {
      const ctrl = new AbortController();
      const reason = new Error('shutdown');
      ctrl.abort(reason);
      const e = abortReason(ctrl.signal);
      expect(e).toMatchObject({ code: 'cancelled', message: 'the operation was cancelled' });
      expect(e.cause).toBe(reason);
    });
  });
});

describe('sleep', () => {
  describe('when the signal aborts with an AgentRxError during the wait', () => {
    it('should reject with that error at once', async () => {
      const ctrl = new AbortController();
      const p = sleep(MAX_TIMER_MS, ctrl.signal);
      expect(await stateOf(p)).toBe('pending');
      const reason = new AgentRxError('cancelled', 'the session was cancelled');
      ctrl.abort(reason);
      await expect(p).rejects.toBe(reason);
    });
  });

  describe('when the signal aborts without an AgentRxError reason', () => {
    it('should reject with a cancelled AgentRxError', async () => {
      const ctrl = new AbortController();
      const p = sleep(MAX_TIMER_MS, ctrl.signal);
      ctrl.abort();
      await expect(p).rejects.toBeInstanceOf(AgentRxError);
      await expect(p).rejects.toMatchObject({ code: 'cancelled' });
    });
  });

  describe('when the signal has already aborted', () => {
    it('should reject with its reason without starting a timer', async () => {
      const ctrl = new AbortController();
      const reason = new AgentRxError('timeout', 'the run timed out');
      ctrl.abort(reason);
      await expect(sleep(0, ctrl.signal)).rejects.toBe(reason);
    });
  });

  describe('when no signal aborts', () => {
    it('should resolve once the delay has passed (0, negative and NaN mean no delay)', async () => {
      const ctrl = new AbortController();
      await expect(sleep(0, ctrl.signal)).resolves.toBeUndefined();
      await expect(sleep(-5)).resolves.toBeUndefined();
      await expect(sleep(Number.NaN)).resolves.toBeUndefined();
    });
  });

  describe('followAbort', () => {
    it('should call back at once for an aborted signal, once on a later abort, and never after until settled', async () => {
      const calls: string[] = [];
      followAbort(AbortSignal.abort(), () => calls.push('already'), new Promise(() => undefined));
      const live = new AbortController();
      followAbort(live.signal, () => calls.push('live'), new Promise(() => undefined));
      const released = new AbortController();
      const done = Promise.resolve();
      followAbort(released.signal, () => calls.push('released'), done);
      await done;
      expect(getEventListeners(released.signal, 'abort')).toHaveLength(0);
      live.abort();
      live.abort();
      released.abort();
      expect(calls).toEqual(['already', 'live']);
    });
  });
});

describe('abortable', () => {
  describe('when the signal is already aborted and the promise fails later', () => {
    it('should reject at once with the abort reason, and leave no unhandled rejection behind', async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const ctrl = new AbortController();
        ctrl.abort(new AgentRxError('cancelled', 'stopped'));
        let fail!: (e: unknown) => void;
        const work = new Promise<never>((_, reject) => (fail = reject));
        await expect(abortable(work, ctrl.signal)).rejects.toMatchObject({ code: 'cancelled' });
        fail(new AgentRxError('timeout', 'idle'));
        // Unhandled rejections are reported after the microtask queue drains.
        await new Promise<void>((resolve) => setImmediate(resolve));
        await new Promise<void>((resolve) => setImmediate(resolve));
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
    });
  });
});
