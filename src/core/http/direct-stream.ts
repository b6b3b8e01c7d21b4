import type { Readable } from 'node:stream';
import type { AxiosHeaders, AxiosInstance, AxiosInterceptorManager, AxiosRequestConfig, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { axiosModule, type AxiosModule } from './axios-module.js';
import { needsFullAdapter, sendStreamed } from './stream-adapter.js';

/**
 * The direct path of `HttpClientFactoryImpl.stream`: for an instance exactly as the factory made
 * it (no interceptor, default or transform added or changed by anyone since), the streamed call
 * skips axios's request pipeline (config merge, option validation, the interceptor chain, the
 * dispatch and its transforms) and does what that pipeline would do for it, in one step: the
 * instance's default headers, the factory's own interceptor (its headers and agents), the JSON
 * body, then the lean `node:http` transport (`sendStreamed`), and the factory's error redaction.
 *
 * The moment an instance differs from what the factory made — a host's interceptor, a changed
 * default, a transform — or a call uses an option this path does not implement, the call goes
 * through the instance's whole axios pipeline as before: the seam hosts use (interceptors, proxy
 * settings, agents, adapters) is never skipped, only the work it would do for nothing.
 */

/** What the factory installed on an instance it made: its request interceptor and its error hook. */
export interface FactorySetup {
  /** The factory's synchronous request interceptor (headers from the options, pooled agents). */
  readonly onRequest: (config: InternalAxiosRequestConfig) => InternalAxiosRequestConfig;
  /** The rejection hook of the factory's response interceptor (redaction of secrets). */
  readonly onError: (error: unknown) => unknown;
  /** The ids `use` returned for them. */
  readonly requestId: number;
  readonly responseId: number;
}

/** An object and its own entries when the factory finished the instance. */
type Shape = readonly { readonly obj: Record<string, unknown>; readonly keys: readonly string[]; readonly values: readonly unknown[] }[];

interface Known extends FactorySetup {
  readonly requestHandler: unknown;
  readonly responseHandler: unknown;
  readonly shape: Shape;
}

/** Instances made by the factory, with how they looked then. */
const known = new WeakMap<AxiosInstance, Known>();

/** Per-call options the direct path implements (anything else goes through axios). */
const DIRECT_OPTIONS = new Set(['method', 'url', 'data', 'signal', 'headers', 'validateStatus', 'responseType']);
/**
 * axios's own transforms, as they were when the factory made its first instance (a host that
 * replaces them globally after that gets the pipeline).
 */
let defaultTransforms: { readonly request: unknown; readonly response: unknown } | undefined;
const transformsOf = (ax: AxiosModule): { readonly request: unknown; readonly response: unknown } =>
  (defaultTransforms ??= { request: ax.default.defaults.transformRequest, response: ax.default.defaults.transformResponse });

/**
 * Records `instance` as made by the factory with `setup` installed, as it is now. Call it last in
 * `create`: any later change to its defaults or interceptors sends its calls through axios.
 */
export function rememberFactoryInstance(instance: AxiosInstance, setup: FactorySetup): void {
  const requestHandler = handlersOf(instance.interceptors.request)?.[setup.requestId];
  const responseHandler = handlersOf(instance.interceptors.response)?.[setup.responseId];
  if (!requestHandler || !responseHandler) return;
  known.set(instance, { ...setup, requestHandler, responseHandler, shape: shapeOf(instance) });
}

/**
 * Sends the streamed call `config` on `client` directly when both allow it (see the file's
 * comment); `undefined` when the call must go through the instance's axios pipeline.
 */
export function directStream(client: AxiosInstance, config: AxiosRequestConfig): Promise<AxiosResponse<Readable>> | undefined {
  const own = known.get(client);
  if (!own || !callIsPlain(config) || !interceptorsAreOwn(client, own) || !shapeHolds(own.shape)) return undefined;
  // Loaded: the factory made `client`.
  const { CanceledError, isCancel, AxiosHeaders } = axiosModule();
  const d = client.defaults;
  const method = String(config.method ?? d.method ?? 'get').toLowerCase();
  const headers = defaultHeaders(new AxiosHeaders(), d.headers, method);
  if (config.headers) headers.set(config.headers as Record<string, string>);
  let request = {
    baseURL: d.baseURL,
    url: config.url,
    method,
    headers,
    data: config.data as unknown,
    timeout: d.timeout,
    transitional: d.transitional,
    validateStatus: config.validateStatus !== undefined ? config.validateStatus : d.validateStatus,
    responseType: 'stream',
    ...(config.signal ? { signal: config.signal } : {}),
  } as InternalAxiosRequestConfig;
  const signal = config.signal as AbortSignal | undefined;
  try {
    request = own.onRequest(request);
    // What axios's default transformRequest does with a plain object, and the dispatch after it.
    if (request.data !== undefined) {
      request.headers.setContentType('application/json', false);
      request.data = JSON.stringify(request.data);
    }
    if (method === 'post' || method === 'put' || method === 'patch') request.headers.setContentType('application/x-www-form-urlencoded', false);
  } catch (e) {
    return Promise.reject(own.onError(e));
  }
  if (needsFullAdapter(request)) return undefined;
  if (signal?.aborted) return Promise.reject(own.onError(new CanceledError(undefined, request)));
  return sendStreamed(request).then(
    (response) => {
      if (signal?.aborted) throw new CanceledError(undefined, request);
      return response;
    },
    (error: unknown) => {
      if (signal?.aborted && !isCancel(error)) throw own.onError(new CanceledError(undefined, request));
      throw own.onError(error);
    },
  );
}

/** The call sets only options this path implements, and its body (if any) is a plain object. */
function callIsPlain(config: AxiosRequestConfig): boolean {
  for (const key of Object.keys(config)) if (!DIRECT_OPTIONS.has(key)) return false;
  if (config.responseType !== undefined && config.responseType !== 'stream') return false;
  const data: unknown = config.data;
  if (data !== undefined && !isPlainObject(data)) return false;
  const headers: unknown = config.headers;
  return headers === undefined || (isPlainObject(headers) && Object.values(headers).every((v) => typeof v === 'string'));
}

/** Only the factory's two interceptors are installed (none added, none ejected). */
function interceptorsAreOwn(client: AxiosInstance, own: Known): boolean {
  return onlyHandler(handlersOf(client.interceptors.request), own.requestHandler) && onlyHandler(handlersOf(client.interceptors.response), own.responseHandler);
}

function onlyHandler(handlers: readonly unknown[] | undefined, handler: unknown): boolean {
  if (!handlers) return false;
  let seen = 0;
  for (const h of handlers) {
    if (h === null || h === undefined) continue;
    if (h !== handler) return false;
    seen++;
  }
  return seen === 1;
}

function handlersOf<V>(manager: AxiosInterceptorManager<V>): readonly unknown[] | undefined {
  const handlers = manager.handlers as unknown;
  return Array.isArray(handlers) ? handlers : undefined;
}

/**
 * The defaults that decide a request, as objects and their entries: `defaults` itself, its header
 * buckets, its transitional options and its transforms. `undefined` (never direct) when the
 * transforms are not axios's own.
 */
function shapeOf(instance: AxiosInstance): Shape {
  const d: Record<string, unknown> = instance.defaults;
  const objects: Record<string, unknown>[] = [d];
  const headers = d['headers'];
  if (isObject(headers)) {
    objects.push(headers);
    for (const v of Object.values(headers)) if (isObject(v)) objects.push(v);
  }
  for (const key of ['transitional', 'transformRequest', 'transformResponse', 'params']) {
    const v = d[key];
    if (isObject(v)) objects.push(v);
  }
  const transforms = transformsOf(axiosModule());
  if (!sameList(d['transformRequest'], transforms.request) || !sameList(d['transformResponse'], transforms.response)) {
    // A transform of the host's: mark the shape as never holding.
    return [{ obj: {}, keys: [''], values: [] }];
  }
  return objects.map((obj) => {
    const keys = Object.keys(obj);
    return { obj, keys, values: keys.map((k) => obj[k]) };
  });
}

/** True while every recorded object still has exactly its recorded entries, in the same order. */
function shapeHolds(shape: Shape): boolean {
  for (const { obj, keys, values } of shape) {
    const now = Object.keys(obj);
    if (now.length !== keys.length) return false;
    for (let i = 0; i < keys.length; i++) if (now[i] !== keys[i] || obj[keys[i]!] !== values[i]) return false;
  }
  return true;
}

/**
 * axios's header flattening: `common`, then the method's bucket, then the headers outside buckets
 * (an object-valued entry of `defaults.headers` is a bucket: `common` or one per method name),
 * set on `headers` (empty).
 */
function defaultHeaders(headers: AxiosHeaders, defaults: Record<string, unknown>, method: string): AxiosHeaders {
  const common = defaults['common'];
  const forMethod = defaults[method];
  if (isObject(common)) headers.set(common as Record<string, string>);
  if (isObject(forMethod)) headers.set(forMethod as Record<string, string>);
  for (const [k, v] of Object.entries(defaults)) {
    if (isObject(v)) continue;
    headers.set(k, v as string);
  }
  return headers;
}

function sameList(a: unknown, b: unknown): boolean {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  return a.every((x, i) => x === b[i]);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}
