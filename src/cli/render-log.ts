import { Subject } from '../core/util/rxjs.js';
import { JsonlConsumer } from '../consumers/jsonl/jsonl.consumer.js';
import { TerminalConsumer } from '../consumers/terminal/terminal.consumer.js';
import { withAgUi } from '../core/events/translated-event.js';
import { isAgentRxEvent, type SessionEvent } from '../core/events/session-event.js';
import { stopReasonForCode, type StopReason } from '../core/plugin/event-consumer.js';
import { ConsumerHub, type ConsumerError } from '../core/session/consumer-hub.js';
import type { CliIo } from './cli-io.js';
import { MAX_PACE_GAP_MS, type RenderFormat } from './render-flags.js';

/**
 * Renders recorded envelopes through the normal consumers, as a live session would: their AG-UI
 * translation to the terminal renderer (timings from the recorded clock) or as JSON lines, or
 * the envelopes themselves as JSON lines. With `pace`, waits the recorded gap between envelopes
 * (at most {@link MAX_PACE_GAP_MS}); `io.signal` stops early.
 */
export async function renderLog(
  log: readonly SessionEvent[],
  format: RenderFormat,
  io: CliIo,
  opts: { pace?: boolean; sessionId?: string; threadId?: string } = {},
): Promise<void> {
  const feed = async (next: (env: SessionEvent) => void): Promise<void> => {
    let prevAt: number | undefined;
    for (const env of log) {
      if (io.signal?.aborted) return;
      if (opts.pace && prevAt !== undefined && env.at > prevAt) await sleep(Math.min(env.at - prevAt, MAX_PACE_GAP_MS), io.signal);
      prevAt = env.at;
      next(env);
    }
  };
  if (format === 'envelopes') {
    await feed((env) => io.out.write(`${JSON.stringify(env)}\n`));
    return;
  }
  const consumer = format === 'agui' ? new JsonlConsumer(io.out) : new TerminalConsumer({ out: io.out, live: false, env: io.env, clock: 'events' });
  const errors = new Subject<ConsumerError>();
  errors.subscribe((e) => io.err.write(`agentrx: consumer '${e.consumerId}' ${e.phase}: ${e.message}\n`));
  const hub = new ConsumerHub([consumer], { handlerTimeoutMs: 10_000, queueLimit: 4 * log.length + 100, stopTimeoutMs: 10_000 }, errors);
  const envelopes = new Subject<SessionEvent>();
  const attachment = hub.attach(envelopes.pipe(withAgUi()), () => opts.sessionId);
  await feed((env) => envelopes.next(env));
  envelopes.complete();
  await attachment.close(stopReasonOf(log));
  errors.complete();
}

/** How the recorded session ended, for the consumers' `stop`. */
function stopReasonOf(log: readonly SessionEvent[]): StopReason {
  for (let i = log.length - 1; i >= 0; i--) {
    const env = log[i]!;
    if (isAgentRxEvent(env, 'agentrx.run_error')) return stopReasonForCode(env.raw.code);
    if (isAgentRxEvent(env, 'agentrx.run_finished')) return 'completed';
  }
  return 'completed';
}

/** Waits `ms`, or less when `signal` aborts (a paced replay stops at once). */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((done) => {
    const timer = setTimeout(finish, ms);
    function finish(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      done();
    }
    signal?.addEventListener('abort', finish, { once: true });
  });
}
