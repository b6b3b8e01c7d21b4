import { performance } from 'node:perf_hooks';

/** Runs queued synchronous tasks later, in order. */
export interface TaskScheduler {
  /** Queues `task`; it runs later (never synchronously), after the tasks queued before it. */
  schedule(task: () => void): void;
}

/**
 * A FIFO of small synchronous tasks run in time slices on the event loop's check phase. Each slice
 * runs queued tasks in order until `sliceMs` have passed, then yields with one `setImmediate`,
 * so timers and I/O get a turn between slices. Many producers (e.g. hundreds of HTTP streams)
 * share one scheduler so that one slice, not one callback per producer, runs per loop turn: the
 * loop is never blocked much longer than `sliceMs` by queued work, however many producers there
 * are.
 *
 * Tasks run in the order they were scheduled. A task scheduled while a slice runs joins the end
 * of the queue (it may run in the same slice). Microtasks a task queues (promise reactions) run
 * after the slice, not inside the budget, so tasks should do their work synchronously.
 */
export class TimeSliceScheduler implements TaskScheduler {
  private tasks: (() => void)[] = [];
  private head = 0;
  private pending = false;

  private readonly now: () => number;
  private readonly onError: (error: unknown) => void;

  /**
   * @param sliceMs Longest stretch of queued tasks run back to back before yielding.
   * @param options.now Clock in ms (tests); default `performance.now`.
   * @param options.onError Called with what a task threw; default: rethrow it on a fresh
   *   macrotask, where it surfaces like an error thrown by an event handler.
   */
  constructor(
    private readonly sliceMs = 4,
    options: { readonly now?: () => number; readonly onError?: (error: unknown) => void } = {},
  ) {
    this.now = options.now ?? (() => performance.now());
    this.onError = options.onError ?? ((error) => setImmediate(rethrow, error));
  }

  /**
   * Queues `task` to run in a later slice (never synchronously). A task that throws does not stop
   * the others; its error goes to `onError`.
   */
  schedule(task: () => void): void {
    this.tasks.push(task);
    if (!this.pending) {
      this.pending = true;
      setImmediate(this.runSlice);
    }
  }

  /** Tasks queued and not yet run. */
  get size(): number {
    return this.tasks.length - this.head;
  }

  private readonly runSlice = (): void => {
    const start = this.now();
    while (this.head < this.tasks.length) {
      const task = this.tasks[this.head]!;
      this.tasks[this.head] = noop;
      this.head++;
      try {
        task();
      } catch (error) {
        this.onError(error);
      }
      if (this.now() - start >= this.sliceMs) break;
    }
    if (this.head >= this.tasks.length) {
      this.tasks = [];
      this.head = 0;
      this.pending = false;
      return;
    }
    if (this.head > 1024 && this.head * 2 > this.tasks.length) {
      this.tasks = this.tasks.slice(this.head);
      this.head = 0;
    }
    setImmediate(this.runSlice);
  };
}

/**
 * The process-wide scheduler the HTTP stream paths share (one slice per loop turn for all of
 * them). Slices of 2 ms, which kept the event-loop delay of the concurrency bench about half of
 * what 4 ms slices gave, at no cost in wall time: the microtasks a slice's tasks queue run after
 * it, outside its budget, so a shorter slice also bounds that spill.
 */
export const sharedScheduler = new TimeSliceScheduler(2);

function noop(): void {}

function rethrow(error: unknown): never {
  throw error;
}
