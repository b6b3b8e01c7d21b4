import { request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { AxiosAdapter, AxiosError, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import { axiosModule, withAxios } from './axios-module.js';

/**
 * The axios adapter of streamed calls (`HttpClientFactory.stream`): one `node:http(s)` request,
 * the response body handed over as the IncomingMessage itself. It replaces only the last step of
 * axios's pipeline, so the instance's request and response interceptors, its headers, its
 * `transformRequest`, `validateStatus`, `timeout`, `signal` and agents all still apply; what it
 * skips is the work of axios's Node adapter that a streamed model call does not need
 * (follow-redirects' request wrapper, the proxy look-up, the response-stream transforms).
 *
 * Whatever it does not implement goes to axios's own Node adapter unchanged: a `proxy` in the
 * config or a proxy environment variable (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, any case),
 * `auth`, `socketPath`, a custom `transport` or `lookup`, a request body that is not a string or
 * Buffer, a URL that is not http(s). Differences from axios's adapter on the paths it handles:
 * redirects are not followed (a 3xx is returned as the answer), `Accept-Encoding` is not added
 * (an encoded answer, when the caller asked for one, is still decoded), and `timeout` bounds the
 * wait for the response headers, as axios documents it for stream responses.
 * `fallback` defaults to axios's Node adapter, taken when first needed (axios loads at first use).
 */
export function createStreamAdapter(fallback?: AxiosAdapter): AxiosAdapter {
  return (config) => withAxios((ax) => (needsFullAdapter(config) ? (fallback ?? ax.default.getAdapter('http'))(config) : sendStreamed(config)));
}

const PROXY_ENV = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy'];

/** True when the call uses something only axios's Node adapter implements. */
export function needsFullAdapter(config: InternalAxiosRequestConfig): boolean {
  if (config.proxy) return true;
  if (config.proxy !== false && PROXY_ENV.some((name) => process.env[name])) return true;
  if (config.auth || config.socketPath || config.transport || config.lookup) return true;
  const data: unknown = config.data;
  return data !== undefined && data !== null && typeof data !== 'string' && !Buffer.isBuffer(data);
}

/**
 * Sends one request with `node:http(s)` as described on `createStreamAdapter` (the adapter's lean
 * path, without the `needsFullAdapter` check): `config` is final (headers, body text, agents).
 * Runs once axios is loaded (`axiosModule`): its errors and headers are axios's own classes.
 */
export function sendStreamed(config: InternalAxiosRequestConfig): Promise<AxiosResponse<Readable>> {
  return new Promise((resolve, reject) => {
    const { AxiosError, AxiosHeaders, CanceledError, default: axios } = axiosModule();
    let url: URL;
    try {
      url = new URL(fullUrl(config));
    } catch {
      reject(new AxiosError(`Invalid URL: ${String(config.url)}`, AxiosError.ERR_INVALID_URL, config));
      return;
    }
    const https = url.protocol === 'https:';
    if (!https && url.protocol !== 'http:') {
      reject(new AxiosError(`Unsupported protocol ${url.protocol}`, AxiosError.ERR_BAD_REQUEST, config));
      return;
    }
    const signal = config.signal as AbortSignal | undefined;
    if (signal?.aborted) {
      reject(new CanceledError(undefined, config));
      return;
    }
    const data = config.data as string | Buffer | undefined | null;
    const headers = config.headers instanceof AxiosHeaders ? config.headers : AxiosHeaders.from(config.headers);
    headers.set('User-Agent', `axios/${axios.VERSION}`, false);
    if (data !== undefined && data !== null) headers.setContentLength(Buffer.byteLength(data), false);
    const outgoing = headers.toJSON(true) as OutgoingHttpHeaders;

    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let res: IncomingMessage | undefined;
    const onAbort = (): void => {
      const error = new CanceledError(undefined, config, req);
      if (res) res.destroy(error);
      finish(error);
      req.destroy();
    };
    const detach = (): void => signal?.removeEventListener('abort', onAbort);
    const finish = (error: AxiosError): void => {
      if (timer) clearTimeout(timer);
      if (settled) return;
      settled = true;
      detach();
      reject(error);
    };

    const req: ClientRequest = (https ? httpsRequest : httpRequest)(
      url,
      { method: (config.method ?? 'get').toUpperCase(), headers: outgoing, agent: https ? config.httpsAgent : config.httpAgent },
      (incoming) => {
        if (timer) clearTimeout(timer);
        if (settled) {
          incoming.destroy();
          return;
        }
        res = incoming;
        const body = decoded(incoming);
        // The signal keeps governing the body until it ends.
        incoming.once('close', detach);
        const response: AxiosResponse<Readable> = {
          data: body,
          status: incoming.statusCode ?? 0,
          statusText: incoming.statusMessage ?? '',
          headers: new AxiosHeaders(incoming.headers as Record<string, string>),
          config,
          request: req,
        };
        settled = true;
        const validate = config.validateStatus;
        if (!response.status || !validate || validate(response.status)) {
          resolve(response);
          return;
        }
        detach();
        incoming.destroy();
        const code = response.status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST;
        reject(new AxiosError(`Request failed with status code ${response.status}`, code, config, req, response));
      },
    );
    req.on('error', (e: Error & { code?: string }) => finish(AxiosError.from(e, e.code, config, req)));
    signal?.addEventListener('abort', onAbort, { once: true });
    // A pooled socket keeps the idle timeout of its agent: reset it, the timer below bounds the wait.
    req.setTimeout(0);
    const timeout = Number(config.timeout ?? 0);
    if (timeout > 0) {
      timer = setTimeout(() => {
        const code = config.transitional?.clarifyTimeoutError ? AxiosError.ETIMEDOUT : AxiosError.ECONNABORTED;
        finish(new AxiosError(config.timeoutErrorMessage ?? `timeout of ${timeout}ms exceeded`, code, config, req));
        req.destroy();
      }, timeout);
    }
    req.end(data ?? undefined);
  });
}

/** `baseURL` + `url` (axios's joining rules) + `params` (plain values only). */
function fullUrl(config: InternalAxiosRequestConfig): string {
  const path = config.url ?? '';
  const base = config.baseURL;
  let out = base && !/^([a-z][a-z\d+\-.]*:)?\/\//i.test(path) ? `${base.replace(/\/?\/$/, '')}/${path.replace(/^\/+/, '')}` : path;
  const params = config.params as Record<string, unknown> | undefined;
  if (params) {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) query.append(k, String(v));
    const qs = query.toString();
    if (qs) out += (out.includes('?') ? '&' : '?') + qs;
  }
  return out;
}

/** The body, decoded when the server compressed it (only when the caller asked for an encoding). */
function decoded(incoming: IncomingMessage): Readable {
  const encoding = String(incoming.headers['content-encoding'] ?? '').toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (!decoder) return incoming;
  incoming.on('error', (e) => decoder.destroy(e));
  decoder.on('close', () => incoming.destroy());
  return incoming.pipe(decoder);
}
