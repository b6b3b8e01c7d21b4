import type { Observable } from 'rxjs';
import type { SessionEvent } from '../events/session-event.js';
import type { LiveSession } from './live-session.js';
import type { SessionOptions } from './session-options.js';

/** A reader of a stored session's log: what was recorded after a point, then what follows live. */
export interface LogReader {
  /** Envelopes with `seq` > `afterSeq`, in order, then live ones. */
  readonly events$: Observable<SessionEvent>;
}

/** The health of what a placement depends on: `healthy`, and one entry per dependency (`ok`, or what is wrong, credentials redacted). */
export interface PlacementHealth {
  readonly healthy: boolean;
  readonly checks: Readonly<Record<string, string>>;
}

/**
 * Where sessions run. The default binding runs each in this process; the distributed module
 * binds one that places it on the worker pool. Nothing else asks where a session runs: servers
 * and the CLI open, find and attach through this.
 */
export interface SessionPlacement {
  /**
   * Opens a session (the prompt is its first request). Options that cannot travel where the
   * placement runs sessions are refused with `invalid_options` naming them, except `tools`: a
   * placement elsewhere sends those its client answers (frontend tools) as their declarations,
   * whose calls the client answers through `LiveSession.answerClient`, and leaves out the others.
   */
  open(opts: SessionOptions): Promise<LiveSession>;
  /**
   * Throws `invalid_options` naming the options of `opts` that `open` would refuse (those that
   * cannot travel where the placement runs sessions), so that a caller that gives the same
   * options to every session it opens (a server's `confirmTool`) fails when it is set up.
   */
  checkOptions(opts: Partial<SessionOptions>): void;
  /**
   * The live session of `threadId` opened through another instance sharing this placement, when
   * it is still open (its events start after the log's current end); undefined otherwise. Rejects
   * with `details.threadBusy` while that session's first request is still starting.
   */
  find(threadId: string): Promise<LiveSession | undefined>;
  /** Reads `sessionId`'s log after `afterSeq` (0: from the start), then what follows live. */
  attach(sessionId: string, opts?: { readonly afterSeq?: number }): LogReader;
  /**
   * Announces a reader of `threadId`'s run where every instance sharing the placement sees it,
   * until the returned release is called.
   */
  follow(threadId: string): () => void;
  /** True when a reader on any instance follows `threadId`'s run (see `follow`). */
  followed(threadId: string): Promise<boolean>;
  /** The dependencies' health; resolves within a short timeout, never rejects. */
  health(): Promise<PlacementHealth>;
  /** Lets go of what the placement holds (connections); the sessions are their owners' to end. Idempotent. */
  close(): Promise<void>;
}

/** Starts a session in this process (bound by `AgentRx`): what the in-process placement and the pool's workers run sessions with. */
export interface SessionFactory {
  start(opts: SessionOptions): LiveSession;
}

/** DI token of the {@link SessionPlacement} of an instance (`AgentRx.placement`). */
export const SessionPlacementToken = Symbol('SessionPlacement');
/** DI token of the {@link SessionFactory} of an instance. */
export const SessionFactoryToken = Symbol('SessionFactory');
