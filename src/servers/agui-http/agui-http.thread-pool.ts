import type { AgUiHttpOptions } from './agui-http.config.js';
import { quietly, settledOf, type Thread } from './agui-http.thread.js';

/** How long (ms) a request waits for its thread's streaming run to end before it gets 409. */
const BUSY_WAIT_MS = 1_000;

/**
 * The endpoint's live threads, least recently used first, and their idle lifecycle: a thread
 * without a run is let go of after `threadIdleMs`; beyond `maxIdleThreads` idle ones, or when
 * `maxThreads` is reached, the least recently used idle ones are let go of first. Letting go of a
 * thread releases its session (`LiveSession.release`); the thread's next run waits until that
 * is done (`settled`), so it resumes the session instead of finding it still held.
 */
export class ThreadPool {
  /** By thread id, least recently used first. */
  private readonly threads = new Map<string, Thread>();
  /** Threads whose session is being let go of → its release. */
  private readonly releasing = new Map<string, Promise<void>>();

  constructor(private readonly options: AgUiHttpOptions) {}

  /** Live threads, running or idle. */
  get size(): number {
    return this.threads.size;
  }

  get(threadId: string): Thread | undefined {
    return this.threads.get(threadId);
  }

  /** Every live thread, least recently used first. */
  values(): Thread[] {
    return [...this.threads.values()];
  }

  /** Adds `thread`, or marks it most recently used (eviction takes the first idle one). */
  touch(thread: Thread): void {
    clearTimeout(thread.idleTimer);
    this.threads.delete(thread.id);
    this.threads.set(thread.id, thread);
  }

  /** Drops `thread` and stops reading its session (its session is not touched). */
  forget(thread: Thread): void {
    if (this.threads.get(thread.id) === thread) this.threads.delete(thread.id);
    clearTimeout(thread.idleTimer);
    // Deferred: this may run inside the subscription's own callback.
    queueMicrotask(() => thread.subscription?.unsubscribe());
  }

  /**
   * Forgets `thread` and lets go of its session: released, after a cancel when `cancel` is set
   * or when it waits on the client (a release would wait for answers that will not come).
   */
  letGo(thread: Thread, cancel: boolean): void {
    this.forget(thread);
    const session = thread.session;
    if (cancel || thread.wait.suspended) quietly(() => session.cancel());
    const released = settledOf(session.release());
    this.releasing.set(thread.id, released);
    void released.then(() => {
      if (this.releasing.get(thread.id) === released) this.releasing.delete(thread.id);
    });
  }

  /** Lets go of the thread after `threadIdleMs` without a run. */
  armIdle(thread: Thread): void {
    clearTimeout(thread.idleTimer);
    thread.idleTimer = setTimeout(() => {
      if (!thread.run) this.letGo(thread, false);
    }, this.options.threadIdleMs);
    thread.idleTimer.unref();
  }

  /** Lets go of the least recently used idle threads beyond `maxIdleThreads`; threads waiting on the client are kept. */
  trimIdle(): void {
    if (this.threads.size <= this.options.maxIdleThreads) return;
    const idle = (t: Thread): boolean => !t.run && !t.wait.suspended && !t.ended;
    let count = 0;
    for (const t of this.threads.values()) if (idle(t)) count++;
    for (const t of [...this.threads.values()]) {
      if (count <= this.options.maxIdleThreads) return;
      if (!idle(t)) continue;
      this.letGo(t, false);
      count--;
    }
  }

  /** Lets go of the least recently used thread without a run; false when every thread is running. */
  evictIdle(): boolean {
    for (const thread of this.threads.values()) {
      if (!thread.run) {
        this.letGo(thread, false);
        return true;
      }
    }
    return false;
  }

  /**
   * Settles once `threadId` can take a new run. A run of the thread still streaming is waited
   * for, at most `BUSY_WAIT_MS`: its client may have aborted it and sent this request at once,
   * and the disconnect can arrive after it (past the wait, the run is answered 409). Then a
   * session the endpoint let go of (idle, evicted, abandoned) is waited for until released.
   */
  async settled(threadId: string): Promise<void> {
    const run = this.threads.get(threadId)?.run;
    if (run && !run.done) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        run.whenOver.push(resolve);
        timer = setTimeout(resolve, BUSY_WAIT_MS);
      });
      clearTimeout(timer);
    }
    await this.releasing.get(threadId);
  }
}
