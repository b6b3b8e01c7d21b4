export { HttpClientFactory, HttpClientFactoryImpl, isSecretHeader, sanitizeAxiosError } from './http-client-factory.js';
export type { HttpClientOptions } from './http-client-factory.js';
export { abortableSleep, backoffDelay, isTransientError, isTransientStatus, retryAfterMs, withRetry } from './retry.js';
export type { RetryAttemptInfo, RetryOptions } from './retry.js';
