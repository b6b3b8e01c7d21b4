import type { LiveSession } from '../plugin/live-session.js';
import type { SessionOptions } from '../plugin/session-options.js';
import type { LogReader, PlacementHealth, SessionFactory, SessionPlacement } from '../plugin/session-placement.js';
import type { SessionStore } from '../store/session-store.js';
import { checkClientAnswers } from '../tools/client-answers.js';
import { attachLog } from './log-attachment.js';

/** Nothing to check: a session of this process depends on nothing a placement holds. */
const HEALTHY: PlacementHealth = Object.freeze({ healthy: true, checks: Object.freeze({}) });

/**
 * The default placement: every session runs in this process (`factory.start`), with every option
 * (functions and frontend tools included). The threads of this process are their server's own, so
 * `find` finds none elsewhere; readers of a log are counted here, where every reader of this
 * process's sessions is.
 */
export class InProcessPlacement implements SessionPlacement {
  /** Readers following each thread's run (`follow`), by thread id. */
  private readonly followers = new Map<string, number>();

  constructor(
    private readonly factory: SessionFactory,
    private readonly store: SessionStore,
  ) {}

  /**
   * Starts the session in this process (a refusal of its options rejects, as `start` throws it).
   * The client's answers to a stored session's waits (`clientAnswers`) are checked against its
   * stored ledger first, so a run that answers nothing waiting is refused before anything starts.
   */
  async open(opts: SessionOptions): Promise<LiveSession> {
    if (opts.clientAnswers !== undefined && opts.sessionId !== undefined) {
      const record = await this.store.load(opts.sessionId);
      checkClientAnswers(opts.sessionId, record?.ledger ?? [], opts.clientAnswers, Date.now());
    }
    return this.factory.start(opts);
  }

  /** Every option runs here: nothing to refuse. */
  checkOptions(_opts: Partial<SessionOptions>): void {
    // A session of this process takes functions, signals and frontend tools as they are.
  }

  /** Always undefined: only the server that opened a session of this process holds it. */
  async find(_threadId: string): Promise<LiveSession | undefined> {
    return undefined;
  }

  /** Reads the log from the store this process's sessions write to. */
  attach(sessionId: string, opts: { readonly afterSeq?: number } = {}): LogReader {
    return attachLog(this.store, sessionId, opts.afterSeq ?? 0);
  }

  /** Counts a reader of `threadId`'s run until released (idempotent release). */
  follow(threadId: string): () => void {
    this.followers.set(threadId, (this.followers.get(threadId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.followers.get(threadId) ?? 1) - 1;
      if (left > 0) this.followers.set(threadId, left);
      else this.followers.delete(threadId);
    };
  }

  /** True while a reader of this process follows `threadId`'s run. */
  async followed(threadId: string): Promise<boolean> {
    return this.followers.has(threadId);
  }

  /** Healthy, with no checks: sessions of this process need nothing outside it. */
  async health(): Promise<PlacementHealth> {
    return HEALTHY;
  }

  /** Holds nothing to let go of. */
  async close(): Promise<void> {
    // The sessions are their owners' to end; nothing else is held here.
  }
}
