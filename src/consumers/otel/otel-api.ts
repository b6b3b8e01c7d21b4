import { createRequire } from 'node:module';

/** The `@opentelemetry/api` module (its type). */
export type OtelApi = typeof import('@opentelemetry/api');

let api: OtelApi | undefined;

/**
 * `@opentelemetry/api`, loaded when the otel consumer first needs it rather than when `agentrx`
 * is imported: apps without the consumer do not pay for it. Loaded synchronously (its CommonJS
 * build) because the consumer's constructor and event callbacks are synchronous; the API keeps
 * its registered providers and context manager on a process-wide global shared by its ESM and
 * CommonJS builds, so what the app registered through either is seen here.
 */
export function otelApi(): OtelApi {
  api ??= createRequire(import.meta.url)('@opentelemetry/api') as OtelApi;
  return api;
}
