import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import type { AxiosInstance, AxiosRequestConfig, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { axiosModule, loadAxios } from './axios-module.js';
import { injectable } from '../util/inversify.js';
import { directStream, rememberFactoryInstance } from './direct-stream.js';
import { createStreamAdapter } from './stream-adapter.js';

/**
 * Creates the axios instances providers talk HTTP through. Providers never `new` a client
 * themselves (factories over constructors), so tests and hosts can swap transport concerns
 * (proxies, agents, instrumentation) in one place.
 */
export const HttpClientFactory = Symbol('HttpClientFactory');

/** What one client is for. */
export interface HttpClientOptions {
  /** Prefix of every relative request URL, e.g. `http://127.0.0.1:11434/v1`. */
  readonly baseURL: string;
  /**
   * Headers sent on every request. May carry secrets (`Authorization`): they are applied by a
   * request interceptor instead of living in `instance.defaults`, and redacted from errors.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Per-request timeout in ms (axios `timeout`): for buffered responses the whole response, for
   * `responseType: 'stream'` the wait for the response headers. 0 = none.
   */
  readonly timeoutMs?: number;
}

export interface HttpClientFactory {
  /**
   * Resolves once `create` may be called. Optional (a host's own factory that imports axios
   * itself needs none); the default factory loads axios here, at first use, so a process that
   * never sends a request never loads it. Callers use `createClient`, which awaits it.
   */
  ready?(): Promise<void>;

  /**
   * Returns a new axios instance for `opts` (after `ready`, when the factory has it). Called once per provider (or per session); the caller
   * owns the instance. Never logs headers. Errors the instance rejects with keep `config`,
   * `request` and `response` as non-enumerable properties with secret headers redacted, so
   * logging or inspecting an error cannot print a credential.
   */
  create(opts: HttpClientOptions): AxiosInstance;

  /**
   * Sends one request whose response body is read as a stream (the streamed model call, an event
   * stream) through `client`, an instance from `create`, and resolves with the axios response,
   * `data` being the body. Optional so that a host's own factory keeps compiling: callers use
   * `streamRequest`, which falls back to `client.request({...config, responseType: 'stream'})`.
   * The default runs the instance's whole axios pipeline (interceptors, headers, timeout,
   * signal, `validateStatus`, error redaction) with a lean `node:http` adapter as its last step
   * (`createStreamAdapter`); proxies and the other options that adapter does not implement are
   * sent by axios's own Node adapter. An instance nobody changed since `create` made it (no
   * interceptor, default or transform added) skips the pipeline's own work and gets the same
   * request and the same errors (`directStream`).
   */
  stream?(client: AxiosInstance, config: AxiosRequestConfig): Promise<AxiosResponse<Readable>>;
}

/** `factory.create(opts)` once `factory.ready()` (when it has one) resolved. */
export async function createClient(factory: HttpClientFactory, opts: HttpClientOptions): Promise<AxiosInstance> {
  await factory.ready?.();
  return factory.create(opts);
}

/**
 * A client made at first use (`createClient` on the first `get()`; every `get()` resolves with
 * that instance): a provider holds one from its construction without loading axios until its
 * first request. A failed attempt (a factory whose `ready()` or `create()` threw) is not kept:
 * the next `get()` tries again.
 */
export class LazyHttpClient {
  // ES private fields: `opts` carries secret headers, and inspecting an owner must not show them.
  readonly #factory: HttpClientFactory;
  readonly #opts: HttpClientOptions;
  #instance: Promise<AxiosInstance> | undefined;

  constructor(factory: HttpClientFactory, opts: HttpClientOptions) {
    this.#factory = factory;
    this.#opts = opts;
  }

  get(): Promise<AxiosInstance> {
    if (this.#instance) return this.#instance;
    const attempt = createClient(this.#factory, this.#opts);
    this.#instance = attempt;
    attempt.catch(() => {
      if (this.#instance === attempt) this.#instance = undefined;
    });
    return attempt;
  }
}

/** The instance itself, or a lazy client's instance (made now if needed). */
export function clientOf(http: AxiosInstance | LazyHttpClient): AxiosInstance | Promise<AxiosInstance> {
  return http instanceof LazyHttpClient ? http.get() : http;
}

/**
 * Sends a streamed request through `factory.stream` when the factory has one, else through the
 * axios instance itself with `responseType: 'stream'`.
 */
export function streamRequest(factory: HttpClientFactory, client: AxiosInstance, config: AxiosRequestConfig): Promise<AxiosResponse<Readable>> {
  if (factory.stream) return factory.stream(client, config);
  return client.request<Readable>({ ...config, responseType: 'stream' });
}

/** Header names whose values are secrets. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'cookie', 'x-amz-security-token']);

/** True when a header of this name carries a secret and must never be logged. */
export function isSecretHeader(name: string): boolean {
  return SECRET_HEADERS.has(name.toLowerCase());
}

/**
 * TCP keep-alive probe delay of pooled sockets. axios sets 60 s on the socket of every request it
 * sends; an agent with another value (Node's global agent has 1 s) sets its own back each time a
 * socket returns to the pool, so every reused connection paid two `setsockopt` round trips per
 * request. With the same value on both sides the socket is configured once.
 */
const KEEP_ALIVE_PROBE_MS = 60_000;

/**
 * Connection pools shared by every client of the process, like Node's global agents (keep-alive,
 * LIFO reuse, idle pooled sockets closed after 5 s) but with the probe delay above. No cap on
 * sockets.
 */
const agentOptions = { keepAlive: true, keepAliveMsecs: KEEP_ALIVE_PROBE_MS, scheduling: 'lifo', timeout: 5_000 } as const;
const sharedHttpAgent = new HttpAgent(agentOptions);
const sharedHttpsAgent = new HttpsAgent(agentOptions);
/** The adapter of `stream` (stateless; falls back to axios's Node adapter). */
let streamAdapter: ReturnType<typeof createStreamAdapter> | undefined;

/** Default `HttpClientFactory`: plain axios instances with the secret-safety described above. */
@injectable()
export class HttpClientFactoryImpl implements HttpClientFactory {
  /** Loads axios (once per process). */
  async ready(): Promise<void> {
    await loadAxios();
  }

  /** Throws, saying to await `ready()`, when axios is not loaded yet. */
  create(opts: HttpClientOptions): AxiosInstance {
    const instance = axiosModule().default.create({
      baseURL: opts.baseURL,
      timeout: opts.timeoutMs ?? 0,
      // Timeouts surface as ETIMEDOUT (transient) rather than the ambiguous ECONNABORTED.
      transitional: { clarifyTimeoutError: true },
    });
    const headers = { ...(opts.headers ?? {}) };
    // Synchronous: axios then starts the request in the caller's turn instead of after a
    // promise hop, so callers that schedule request set-up (time slices) really contain it.
    const onRequest = (config: InternalAxiosRequestConfig): InternalAxiosRequestConfig => {
      for (const [name, value] of Object.entries(headers)) {
        if (!config.headers.has(name)) config.headers.set(name, value);
      }
      // Set per request, not in `defaults`: inspecting the instance must not reach pooled
      // sockets and the (secret) headers of requests in flight on them.
      config.httpAgent ??= sharedHttpAgent;
      config.httpsAgent ??= sharedHttpsAgent;
      return config;
    };
    const onError = (error: unknown): unknown => sanitizeAxiosError(error);
    const requestId = instance.interceptors.request.use(onRequest, undefined, { synchronous: true });
    const responseId = instance.interceptors.response.use(undefined, (error: unknown) => Promise.reject(onError(error)));
    rememberFactoryInstance(instance, { onRequest, onError, requestId, responseId });
    return instance;
  }

  /**
   * Streamed request through `client`'s axios pipeline, with the lean adapter as its last step.
   * An `adapter` set on the instance by the host (a mock, a custom transport) wins. An instance
   * exactly as `create` made it (no interceptor, default or transform of anyone else's) is sent
   * without the pipeline's own work, with the same result (`directStream`).
   */
  stream(client: AxiosInstance, config: AxiosRequestConfig): Promise<AxiosResponse<Readable>> {
    const adapter = client.defaults.adapter;
    const own = adapter === undefined || isDefaultAdapterList(adapter);
    const direct = own ? directStream(client, config) : undefined;
    if (direct) return direct;
    return client.request<Readable>({ ...config, responseType: 'stream', ...(own ? { adapter: (streamAdapter ??= createStreamAdapter()) } : {}) });
  }
}

/**
 * Makes an axios error safe to log or inspect: secret request headers in `config` are replaced by
 * `[redacted]`, `config`, `request` and `response` become non-enumerable (still readable), and
 * so do the agents in `config` (their sockets hold the raw request headers while in flight).
 * Returns its argument; anything that is not an AxiosError (of any copy of axios: its
 * `isAxiosError` flag) is returned untouched.
 */
export function sanitizeAxiosError(error: unknown): unknown {
  if (!isAxiosError(error)) return error;
  const headers = error.config?.headers as Record<string, unknown> | undefined;
  if (headers) {
    for (const name of Object.keys(headers)) {
      if (isSecretHeader(name)) headers[name] = '[redacted]';
    }
  }
  // The pooled agents reach the sockets of requests in flight and the headers written on them.
  const config = error.config as Record<string, unknown> | undefined;
  for (const key of ['httpAgent', 'httpsAgent']) {
    if (config && Object.prototype.hasOwnProperty.call(config, key)) {
      Object.defineProperty(config, key, { value: config[key], enumerable: false, writable: true, configurable: true });
    }
  }
  for (const key of ['config', 'request', 'response'] as const) {
    if (Object.prototype.hasOwnProperty.call(error, key)) {
      Object.defineProperty(error, key, { value: error[key], enumerable: false, writable: true, configurable: true });
    }
  }
  return error;
}

function isAxiosError(error: unknown): error is import('axios').AxiosError {
  return error instanceof Error && (error as { isAxiosError?: unknown }).isAxiosError === true;
}

/** True for axios's default adapter setting (`['xhr', 'http', 'fetch']`), i.e. none chosen by the host. */
function isDefaultAdapterList(adapter: unknown): boolean {
  return Array.isArray(adapter) && adapter.every((a) => typeof a === 'string') && adapter.includes('http');
}
