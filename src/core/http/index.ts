export { HttpClientFactory, HttpClientFactoryImpl, isSecretHeader, sanitizeAxiosError, streamRequest } from './http-client-factory.js';
export { createStreamAdapter } from './stream-adapter.js';
export type { HttpClientOptions } from './http-client-factory.js';
export { isTransientError, isTransientStatus, retryAfterMs, withRetry } from './retry.js';
export type { RetryAttemptInfo, RetryOptions } from './retry.js';
export { backoffDelay, DEFAULT_BACKOFF_MAX_MS, type BackoffOptions } from '../util/backoff.js';
export { sleep } from '../util/async.js';
