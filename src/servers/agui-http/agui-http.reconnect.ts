import type { IncomingMessage, ServerResponse } from 'node:http';
import { Subscription } from '../../core/util/rxjs.js';
import { toAgentRxError } from '../../core/errors.js';
import type { SessionPlacement } from '../../core/plugin/session-placement.js';
import type { SessionStore } from '../../core/store/session-store.js';
import type { AgUiHttpOptions } from './agui-http.config.js';
import { ThreadFrames, isTerminal, type FrameGroup } from './agui-http.frames.js';
import { sendJson, type HeaderMap } from './agui-http.reply.js';
import type { ClientFrame, RunMessages } from './agui-http.messages.js';
import { AgUiEventStream } from './agui-http.stream.js';
import type { LocalThread, ThreadSuspension } from './agui-http.thread-view.js';
import type { AgUiThreads } from './agui-http.threads.js';
import { logTranslation } from './agui-http.translation.js';
import { clientRunError } from './agui-http.wire-errors.js';
import type { AgUiWireVersion } from './agui-http.wire-version.js';

/** A reconnect: which thread, from where, and the client's run id when it sent one. */
export interface AgUiReconnectRequest {
  readonly threadId: string;
  /** The `Last-Event-ID` (or `?after=`) as sent; undefined: the thread's last run (in progress or not) from its start. */
  readonly lastEventId: string | undefined;
  /** The client's run id, put on RUN_STARTED / RUN_FINISHED (else the one this endpoint gave, else the log's). */
  readonly runId?: string | undefined;
  /** The AG-UI version the client announced (its RunAgentInput's, or a GET's `?protocolVersion=`); default `0.0`. */
  readonly wireVersion?: AgUiWireVersion | undefined;
}

const DECIMAL = /^\d{1,15}$/;

/**
 * Serves reconnects from the session log, read through the placement (`attach`) and translated
 * once per reader: the client frames of the thread's session after `Last-Event-ID` (every frame
 * of every envelope whose `seq` is greater), then the live ones, until the run's terminal event;
 * then the response ends. The thread is the one this endpoint serves, or one whose log another
 * server wrote to the same store (found by its session id, or the thread id in its record; that
 * needs the store). Answers 400 (`invalid_last_event_id`: not a decimal id, or beyond the end of
 * the thread's log; `unknown_thread`), 429 or 503 before the stream. A session failure in the log
 * reaches the client as the live stream told it (`clientRunError`).
 */
export class AgUiReconnects {
  /** Reconnected readers streaming now. */
  active = 0;
  /** Ends each open reader's stream with a RUN_ERROR (the endpoint is closing). */
  private readonly open = new Set<(error: { code: string; message: string }) => void>();

  constructor(
    private readonly store: SessionStore | undefined,
    private readonly placement: SessionPlacement,
    private readonly threads: AgUiThreads,
    private readonly options: AgUiHttpOptions,
  ) {}

  /** Answers one reconnect (never rejects: a failure before the stream is a JSON 5xx). */
  async follow(req: IncomingMessage, res: ServerResponse, request: AgUiReconnectRequest, cors: HeaderMap): Promise<void> {
    const bad = (error: string, message: string): void => sendJson(res, 400, { error, message }, cors);
    const raw = request.lastEventId?.trim();
    if (raw !== undefined && !DECIMAL.test(raw)) {
      return bad(
        'invalid_last_event_id',
        `Last-Event-ID must be the decimal id of an event of this thread's stream; got ${JSON.stringify(request.lastEventId!.slice(0, 40))}`,
      );
    }
    const after = raw === undefined ? undefined : Number(raw);
    const store = this.store;
    if (this.threads.isClosing) return sendJson(res, 503, { error: 'unavailable', message: 'the endpoint is shutting down' }, cors);
    if (this.threads.activeRuns + this.active >= this.options.maxConcurrentRuns) {
      return sendJson(
        res,
        429,
        {
          error: 'too_many_runs',
          message: `${this.threads.activeRuns + this.active} streams are open (limit ${this.options.maxConcurrentRuns}); retry later`,
          retryAfterSeconds: this.options.retryAfterSeconds,
        },
        { ...cors, 'retry-after': String(this.options.retryAfterSeconds) },
      );
    }
    let located: { logId: string; end: number; finished: boolean; local: LocalThread | undefined } | undefined;
    try {
      located = await this.locate(store, request.threadId);
    } catch (e) {
      const err = toAgentRxError(e);
      return sendJson(res, 503, { error: 'unavailable', message: `cannot read the session log: ${err.message}`, code: err.code }, cors);
    }
    if (!located)
      return bad(
        'unknown_thread',
        `thread ${request.threadId} has no session log here; reconnect with the threadId of a run this endpoint (or one sharing its store) served`,
      );
    if (after !== undefined && after > located.end) {
      return bad(
        'invalid_last_event_id',
        `Last-Event-ID ${after} is beyond the end of thread ${request.threadId}'s log (its last event id is ${located.end}); it is not an id of this thread`,
      );
    }
    if (res.destroyed) return;
    this.stream(req, res, request, after, located, store, cors);
  }

  /** Ends every open reconnected stream with a RUN_ERROR `cancelled` (the endpoint is closing). */
  close(): void {
    for (const stop of [...this.open]) stop({ code: 'cancelled', message: 'the endpoint is shutting down' });
  }

  /** The thread's log: this endpoint's thread, a log keyed by the thread id, or a record naming it. */
  private async locate(
    store: SessionStore | undefined,
    threadId: string,
  ): Promise<{ logId: string; end: number; finished: boolean; local: LocalThread | undefined } | undefined> {
    const local = this.threads.local(threadId);
    let logId = local?.logId;
    let finished = false;
    if (logId === undefined && !local && store) {
      const own = await store.load(threadId);
      const indexed = !own && store.findByThread ? await store.findByThread(threadId) : undefined;
      const record =
        own ?? (indexed !== undefined ? await store.load(indexed) : store.findByThread ? undefined : (await store.list()).find((r) => r.threadId === threadId));
      if (!record) return undefined;
      logId = record.sessionId;
      finished = record.status === 'completed' || record.status === 'failed' || record.status === 'cancelled';
    }
    if (logId === undefined) return undefined;
    const end = Math.max(store ? await store.lastSeq(logId) : 0, local?.lastSeq ?? 0);
    return { logId, end, finished, local };
  }

  private stream(
    req: IncomingMessage,
    res: ServerResponse,
    request: AgUiReconnectRequest,
    after: number | undefined,
    located: { logId: string; end: number; finished: boolean; local: LocalThread | undefined },
    store: SessionStore | undefined,
    cors: HeaderMap,
  ): void {
    const { logId, local } = located;
    const stream = new AgUiEventStream(res, req.headers.accept, this.options.heartbeatMs, request.wireVersion);
    const frames = new ThreadFrames(request.threadId, (logRunId) => request.runId ?? local?.clientRunId(logRunId));
    const releaseLocal = local?.hold();
    // Endpoints sharing a worker pool: the endpoint that streamed the run may be another one.
    const releaseElsewhere = this.threads.follow(request.threadId);
    const release = (): void => {
      releaseLocal?.();
      releaseElsewhere();
    };
    this.active++;
    let done = false;
    let position = 0;
    // Closed by `finish`; the tail added to it after that is unsubscribed at once.
    const subscription = new Subscription();
    let known = located;
    /** Without an id: the last run's groups up to the log's end at connect time, sent once caught up. */
    let pending: FrameGroup[] | undefined = after === undefined ? [] : undefined;
    let caughtUp = located.end === 0;
    let started = false;
    /**
     * A reader whose id is already the log's end learns first whether the thread's last run is
     * over: then there is nothing to stream, and it gets 204 (an EventSource stops reconnecting)
     * instead of an open stream of keep-alives. Until then the response is not opened.
     */
    let opened = !(after !== undefined && after >= located.end && located.end > 0);
    /** Whether the replay is inside a run (a RUN_STARTED without its terminal yet). */
    let runOpen = false;
    const openStream = (): void => {
      if (opened) return;
      opened = true;
      stream.open(cors);
    };

    /** Set once the thread's run ended waiting on the client: that end is not in the log. */
    let suspension: ThreadSuspension | undefined;
    /**
     * The replayed run's conversation, when this endpoint streamed it: the client's messages it
     * started with, then its events. A reattaching client (a reloaded page) gets it as the live
     * stream gave it: a MESSAGES_SNAPSHOT of the messages after RUN_STARTED, the whole one before
     * the run's end.
     */
    let conversation: RunMessages | undefined;
    const track = (group: FrameGroup): void => {
      for (const ev of group.events) {
        if (ev.type === 'RUN_STARTED') conversation = local?.conversationOf(ev.runId);
        else conversation?.apply(ev);
      }
    };
    const finish = (): void => {
      if (done) return;
      done = true;
      this.active--;
      this.open.delete(stop);
      subscription.unsubscribe();
      release();
      if (opened) stream.end();
      else if (!res.headersSent) {
        res.writeHead(204, cors);
        res.end();
      }
    };
    const write = (group: FrameGroup): void => {
      openStream();
      const out: ClientFrame[] = [];
      let input: ClientFrame | undefined;
      for (const ev of group.events) {
        // A stream starts with RUN_STARTED (or is a lone RUN_ERROR); a resumed one goes on mid-run.
        if (after === undefined && !started && ev.type !== 'RUN_STARTED' && ev.type !== 'RUN_ERROR') continue;
        started = true;
        if (ev.type === 'RUN_FINISHED' && conversation) out.push(conversation.snapshot(ev.timestamp ?? Date.now()));
        out.push(ev.type === 'RUN_ERROR' ? clientRunError(ev) : ev);
        if (ev.type === 'RUN_STARTED') input = local?.conversationOf(ev.runId)?.snapshot(ev.timestamp ?? Date.now());
        if (isTerminal(ev)) break;
      }
      stream.writeGroup(out, group.seq);
      // After the envelope's frames (whose id it does not take): the conversation the run started with.
      if (input) stream.writeGroup([input], undefined);
      if (out.some((f) => f.type !== 'MESSAGES_SNAPSHOT' && isTerminal(f))) finish();
    };
    const catchUp = (): void => {
      caughtUp = true;
      const groups = pending ?? [];
      pending = undefined;
      for (const g of groups) if (!done) write(g);
    };
    /** Ends the stream with a RUN_ERROR: `error` as it is (the endpoint's own words), or `told` in the client's terms. */
    const stop = (error: { code: string; message: string }, told = false): void => {
      if (done) return;
      openStream();
      const ev = { type: 'RUN_ERROR' as const, ...error, timestamp: Date.now() };
      stream.write(told ? clientRunError(ev) : ev);
      finish();
    };
    /** The replay reached where the run ended waiting on the client: end it as the live stream did. */
    const endIfSuspended = (): void => {
      if (done || !suspension || position < suspension.seq || (after === undefined && !caughtUp)) return;
      const runId = request.runId ?? frames.currentRunId ?? logId;
      const now = Date.now();
      openStream();
      if (conversation) stream.writeGroup([conversation.snapshot(now)], undefined);
      stream.writeGroup([{ type: 'RUN_FINISHED', threadId: request.threadId, runId, outcome: suspension.outcome, timestamp: Date.now() }], undefined);
      finish();
    };
    this.open.add(stop);
    /** The log is complete (its session closed): a run left open there ends with a RUN_ERROR. */
    const ended = (): void => {
      stop({ message: `the session ended; no event follows id ${position}`, code: 'session_closed' });
    };

    if (opened) stream.open(cors);
    res.on('close', finish);
    const following = logTranslation(this.placement.attach(logId, { afterSeq: 0 }).events$).subscribe({
      next: (translated) => {
        const env = translated.envelope;
        if (done || env === undefined) return;
        position = env.seq;
        const group = frames.push(translated);
        track(group);
        for (const ev of group.events) runOpen = ev.type === 'RUN_STARTED' ? true : isTerminal(ev) ? false : runOpen;
        // Caught up with the log at connect time, at the reader's own id: a finished run has nothing more.
        if (!opened && env.seq >= known.end) {
          if (!runOpen && !suspension) return finish();
          openStream();
        }
        if (after !== undefined) {
          if (env.seq > after) write(group);
        } else if (!caughtUp) {
          // Keep only the last run (in progress or not): a RUN_STARTED starts it over.
          if (group.events.some((e) => e.type === 'RUN_STARTED')) pending = [];
          if (group.events.length > 0) pending?.push(group);
        } else write(group);
        if (!caughtUp && env.seq >= known.end) catchUp();
        endIfSuspended();
        if (!done && known.finished && env.seq >= known.end) ended();
      },
      error: (e: unknown) => {
        // The store's error may name its files or its server: the client reads that the log failed.
        stop({ message: `cannot read the session log: ${toAgentRxError(e).message}`, code: 'store_error' }, true);
      },
    });
    subscription.add(following);
    const stopWatching = local?.onSuspended((s) => {
      suspension = s;
      endIfSuspended();
    });
    if (stopWatching) subscription.add(stopWatching);
    if (!done && known.finished && position >= known.end) ended();
    // A session of this endpoint that closes: once the store holds its whole log, nothing follows.
    void local?.closed.then(async () => {
      const last = store ? await store.lastSeq(logId).catch(() => position) : (local?.lastSeq ?? position);
      if (position >= last) ended();
      else known = { ...known, finished: true, end: last };
    });
  }
}
