import { TimeSliceScheduler } from '../../../src/core/util/time-slice-scheduler.js';

/** Resolves once the scheduler has no queued tasks left (checked after each check phase); rejects after 10,000 of them. */
async function drained(s: TimeSliceScheduler): Promise<void> {
  for (let turns = 0; s.size > 0; turns++) {
    if (turns >= 10_000) throw new Error(`${s.size} tasks still queued after 10,000 loop turns`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

describe('TimeSliceScheduler', () => {
  describe('.schedule', () => {
    describe('when tasks are queued', () => {
      it('should run them in order, never synchronously', async () => {
        const s = new TimeSliceScheduler(1_000);
        const log: string[] = [];
        s.schedule(() => log.push('a'));
        s.schedule(() => log.push('b'));
        log.push('sync');
        await drained(s);
        expect(log).toEqual(['sync', 'a', 'b']);
      });
    });

    describe('when the tasks of a slice use up its time', () => {
      it('should yield to the event loop before running the rest', async () => {
        let clock = 0;
        const s = new TimeSliceScheduler(4, { now: () => clock });
        const log: string[] = [];
        const task = (name: string) => () => {
          log.push(name);
          clock += 3;
        };
        s.schedule(task('t1'));
        // Queued by the second task, so in the same check phase as the scheduler's next slice.
        s.schedule(() => {
          task('t2')();
          setImmediate(() => log.push('io'));
        });
        s.schedule(task('t3'));
        s.schedule(task('t4'));
        await drained(s);
        expect(log).toEqual(['t1', 't2', 'io', 't3', 't4']);
      });
    });

    describe('when a task schedules another task', () => {
      it('should run it after the tasks already queued', async () => {
        const s = new TimeSliceScheduler(1_000);
        const log: string[] = [];
        s.schedule(() => {
          log.push('a');
          s.schedule(() => log.push('c'));
        });
        s.schedule(() => log.push('b'));
        await drained(s);
        expect(log).toEqual(['a', 'b', 'c']);
      });
    });

    describe('when a task throws', () => {
      it('should pass the error to onError and still run the other tasks', async () => {
        const errors: unknown[] = [];
        const s = new TimeSliceScheduler(1_000, { onError: (e) => errors.push(e) });
        const log: string[] = [];
        const boom = new Error('boom');
        s.schedule(() => {
          throw boom;
        });
        s.schedule(() => log.push('after'));
        await drained(s);
        expect(errors).toEqual([boom]);
        expect(log).toEqual(['after']);
      });
    });
  });
});
