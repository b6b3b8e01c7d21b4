import { AgentRxError } from '../../../src/core/errors.js';
import { sleep } from '../../../src/core/util/async.js';
import { isTransientError, retryAfterMs, withRetry, type RetryAttemptInfo } from '../../../src/core/http/retry.js';

/** An error shaped like an AxiosError with a response. */
function httpFailure(status: number, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(`Request failed with status code ${status}`), { response: { status, headers } });
}

function transportFailure(code: string, message = code): Error {
  return Object.assign(new Error(message), { code });
}

/** A scripted operation: each call takes the next outcome. */
function scripted<T>(outcomes: readonly (T | Error)[]): { fn: (attempt: number) => Promise<T>; attempts: number[] } {
  const attempts: number[] = [];
  return {
    attempts,
    fn: async (attempt) => {
      attempts.push(attempt);
      const o = outcomes[attempts.length - 1];
      if (o === undefined) throw new Error('scripted operation called too often');
      if (o instanceof Error) throw o;
      return o;
    },
  };
}

describe('retry', () => {
  describe('isTransientError', () => {
    describe('when called with HTTP statuses', () => {
      it('should treat 408, 429 and 5xx as transient and every other 4xx as final', () => {
        for (const s of [408, 429, 500, 502, 503, 504, 599]) expect([s, isTransientError(httpFailure(s))]).toEqual([s, true]);
        for (const s of [400, 401, 403, 404, 409, 413, 422]) expect([s, isTransientError(httpFailure(s))]).toEqual([s, false]);
      });
    });

    describe('when called with transport failures', () => {
      it('should treat resets, refusals, timeouts and hang-ups as transient', () => {
        for (const code of ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE']) expect([code, isTransientError(transportFailure(code))]).toEqual([code, true]);
        expect(isTransientError(new Error('socket hang up'))).toBe(true);
        expect(isTransientError(new Error('boom'))).toBe(false);
        expect(isTransientError(transportFailure('ENOTFOUND'))).toBe(false);
      });
    });

    describe('when called with cancellations, explicit flags and causes', () => {
      it('should follow the explicit flag, refuse cancellations and look through causes', () => {
        expect(isTransientError(new AgentRxError('http_error', 'x', { status: 503, transient: false }))).toBe(false);
        expect(isTransientError(new AgentRxError('stream_error', 'x', { transient: true }))).toBe(true);
        expect(isTransientError(new AgentRxError('http_error', 'x', { status: 502 }))).toBe(true);
        expect(isTransientError(Object.assign(new Error('canceled'), { name: 'CanceledError', code: 'ERR_CANCELED' }))).toBe(false);
        expect(isTransientError(new Error('wrapped', { cause: transportFailure('ECONNRESET') }))).toBe(true);
        expect(isTransientError(undefined)).toBe(false);
        expect(isTransientError('ECONNRESET')).toBe(false);
      });
    });
  });

  describe('retryAfterMs', () => {
    describe('when given delta-seconds, an HTTP-date or an error carrying one', () => {
      it('should return the delay in ms', () => {
        const now = Date.parse('2026-01-01T00:00:00Z');
        expect(retryAfterMs('3', now)).toBe(3000);
        expect(retryAfterMs('0.25', now)).toBe(250);
        expect(retryAfterMs('Thu, 01 Jan 2026 00:00:07 GMT', now)).toBe(7000);
        expect(retryAfterMs('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
        expect(retryAfterMs(httpFailure(429, { 'Retry-After': '2' }), now)).toBe(2000);
        expect(retryAfterMs(new AgentRxError('http_error', 'x', { retryAfter: '5' }), now)).toBe(5000);
        expect(retryAfterMs('soon', now)).toBeUndefined();
        expect(retryAfterMs(httpFailure(429), now)).toBeUndefined();
      });
    });
  });

  describe('withRetry', () => {
    describe('when the operation fails transiently, then succeeds', () => {
      it('should retry with the shared equal-jitter exponential delays and return the result', async () => {
        const op = scripted<string>([transportFailure('ECONNRESET'), httpFailure(503), 'ok']);
        const sleeps: number[] = [];
        const infos: RetryAttemptInfo[] = [];
        const result = await withRetry(op.fn, {
          maxRetries: 3,
          baseMs: 100,
          random: () => 0.5,
          sleep: async (ms) => {
            sleeps.push(ms);
          },
          onRetry: (i) => infos.push(i),
        });
        expect(result).toBe('ok');
        expect(op.attempts).toEqual([0, 1, 2]);
        // backoffDelay(1) and (2) with random 0.5: three quarters of 100 and of 200.
        expect(sleeps).toEqual([75, 150]);
        expect(infos.map((i) => [i.retry, i.maxRetries, i.fromRetryAfter])).toEqual([
          [1, 3, false],
          [2, 3, false],
        ]);
      });
    });

    describe('when the backoff window passes maxDelayMs', () => {
      it('should cap every computed delay', async () => {
        const op = scripted<string>([httpFailure(503), httpFailure(503), httpFailure(503), httpFailure(503), 'ok']);
        const sleeps: number[] = [];
        await withRetry(op.fn, {
          maxRetries: 4,
          baseMs: 100,
          maxDelayMs: 300,
          random: () => 0.999_999,
          sleep: async (ms) => {
            sleeps.push(ms);
          },
        });
        expect(sleeps).toEqual([100, 200, 300, 300]);
      });
    });

    describe('when the failure carries Retry-After', () => {
      it('should wait exactly that long (seconds or HTTP-date), capped', async () => {
        const now = Date.parse('2026-01-01T00:00:00Z');
        const op = scripted<string>([
          httpFailure(429, { 'retry-after': '2' }),
          httpFailure(503, { 'retry-after': 'Thu, 01 Jan 2026 00:00:04 GMT' }),
          httpFailure(429, { 'retry-after': '3600' }),
          'ok',
        ]);
        const sleeps: number[] = [];
        await withRetry(op.fn, {
          maxRetries: 5,
          baseMs: 100,
          maxRetryAfterMs: 60_000,
          now: () => now,
          random: () => 0.5,
          sleep: async (ms) => {
            sleeps.push(ms);
          },
        });
        expect(sleeps).toEqual([2000, 4000, 60_000]);
      });
    });

    describe('when the failure is a non-transient 4xx', () => {
      it('should not retry and rethrow it', async () => {
        const failure = httpFailure(401);
        const op = scripted<string>([failure, 'never']);
        const sleeps: number[] = [];
        const sleep = async (ms: number): Promise<void> => {
          sleeps.push(ms);
        };
        await expect(withRetry(op.fn, { maxRetries: 3, baseMs: 1, sleep })).rejects.toBe(failure);
        expect(op.attempts).toEqual([0]);
        expect(sleeps).toEqual([]);
      });
    });

    describe('when the retries are used up', () => {
      it('should rethrow the last error after maxRetries + 1 attempts', async () => {
        const last = httpFailure(502);
        const op = scripted<string>([httpFailure(500), httpFailure(503), last]);
        await expect(withRetry(op.fn, { maxRetries: 2, baseMs: 1, sleep: async () => undefined })).rejects.toBe(last);
        expect(op.attempts).toEqual([0, 1, 2]);
      });
    });

    describe('when a custom isRetryable refuses', () => {
      it('should not retry even a transient failure', async () => {
        const op = scripted<string>([httpFailure(503), 'ok']);
        await expect(withRetry(op.fn, { maxRetries: 2, baseMs: 1, sleep: async () => undefined, isRetryable: () => false })).rejects.toMatchObject({
          response: { status: 503 },
        });
      });
    });

    describe('when the signal aborts during the backoff wait', () => {
      it('should reject promptly with cancelled and make no further attempt', async () => {
        const controller = new AbortController();
        const op = scripted<string>([httpFailure(503), 'ok']);
        const promise = withRetry(op.fn, {
          maxRetries: 3,
          baseMs: 1,
          // A wait of an hour: only the abort can end it.
          random: () => 0.5,
          maxDelayMs: 3_600_000,
          signal: controller.signal,
          onRetry: () => controller.abort(),
          sleep: (ms, signal) => sleep(ms * 3_600_000, signal),
        });
        await expect(promise).rejects.toMatchObject({ code: 'cancelled' });
        expect(op.attempts).toEqual([0]);
      });
    });

    describe('when the signal aborts with an AgentRxError reason during the default wait', () => {
      it('should reject with that very error and make no further attempt', async () => {
        const controller = new AbortController();
        const reason = new AgentRxError('timeout', 'the run timed out');
        const op = scripted<string>([httpFailure(503), 'ok']);
        // The default wait (no injected sleep): an hour long, so only the abort can end it.
        const promise = withRetry(op.fn, { maxRetries: 3, baseMs: 3_600_000, signal: controller.signal, onRetry: () => controller.abort(reason) });
        await expect(promise).rejects.toBe(reason);
        expect(op.attempts).toEqual([0]);
      });
    });

    describe('when the signal aborts while an attempt is in flight', () => {
      it('should reject with the signal reason rather than the attempt error', async () => {
        const controller = new AbortController();
        const reason = new AgentRxError('cancelled', 'the session was cancelled');
        const promise = withRetry(
          async () => {
            controller.abort(reason);
            throw httpFailure(503);
          },
          { maxRetries: 3, baseMs: 1, signal: controller.signal, sleep: async () => undefined },
        );
        await expect(promise).rejects.toBe(reason);
      });
    });

    describe('when the signal is already aborted', () => {
      it('should make no attempt', async () => {
        const controller = new AbortController();
        controller.abort();
        const op = scripted<string>(['ok']);
        await expect(withRetry(op.fn, { maxRetries: 3, baseMs: 1, signal: controller.signal })).rejects.toMatchObject({ code: 'cancelled' });
        expect(op.attempts).toEqual([]);
      });
    });

    describe('when onRetry throws', () => {
      it('should still retry', async () => {
        const op = scripted<string>([httpFailure(503), 'ok']);
        const result = await withRetry(op.fn, {
          maxRetries: 1,
          baseMs: 1,
          sleep: async () => undefined,
          onRetry: () => {
            throw new Error('logger down');
          },
        });
        expect(result).toBe('ok');
      });
    });
  });
});

describe('isTransientError with wrapped and AWS-shaped errors', () => {
  it('should read a transport code from an AgentRxError details and an AWS SDK $metadata status', async () => {
    const { AgentRxError } = await import('../../../src/core/errors.js');
    const { isTransientError: transient } = await import('../../../src/core/http/retry.js');
    expect(transient(new AgentRxError('http_error', 'connection reset', { code: 'ECONNRESET' }))).toBe(true);
    expect(transient(new AgentRxError('http_error', 'bad request', { code: 'EINVAL' }))).toBe(false);
    expect(transient(Object.assign(new Error('throttled'), { $metadata: { httpStatusCode: 503 } }))).toBe(true);
    expect(transient(Object.assign(new Error('validation'), { $metadata: { httpStatusCode: 400 } }))).toBe(false);
  });
});
