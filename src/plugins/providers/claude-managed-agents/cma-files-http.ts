import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { AxiosInstance, AxiosResponse } from 'axios';
import { bytesOf, byteLengthOf, isReplayable, readableOf } from '../../../core/artifacts/artifact-bytes.js';
import type { ArtifactBody } from '../../../core/artifacts/artifacts.js';
import { AgentRxError, isAgentRxError } from '../../../core/errors.js';
import { clientOf, streamRequest, type HttpClientFactory, type LazyHttpClient } from '../../../core/http/http-client-factory.js';
import { isTransientError, withRetry } from '../../../core/http/retry.js';
import type { Logger } from '../../../core/logger.js';
import { abortReason } from '../../../core/util/async.js';
import { isUnprocessed, jsonMapOf } from './cma-client.js';
import { headerOf, statusError, transportError } from './cma-http-errors.js';
import { isMap, type WireMap } from './cma-wire.js';

/** `anthropic-beta` of the Files API. */
export const FILES_BETA = 'files-api-2025-04-14';

/** Settings of a `CmaFilesHttp` (a subset of the provider options). */
export interface CmaFilesHttpOptions {
  /** The provider's `anthropic-beta` value (includes `managed-agents-2026-04-01`). */
  readonly beta: string;
  readonly maxRetries: number;
  readonly retryBaseMs: number;
  readonly listPageSize: number;
  /** Wait for a response (a download: for its headers), ms. */
  readonly requestTimeoutMs: number;
}

/**
 * The Claude Managed Agents Files API and session resources over the provider's configured axios
 * instance (which carries the key and `anthropic-version`). Beta headers per call, as the
 * service wants them: an upload sends `files-api-2025-04-14` (and lets the multipart body set its
 * content type); listing, downloading and deleting files send both betas comma-joined; session
 * resources send the provider's managed-agents beta.
 *
 * Retries follow `CmaClient`'s policy: GETs and DELETEs are retried on any transient failure
 * (408, 429, 5xx, transport), `maxRetries` times with backoff; attaching a resource only when the
 * request certainly did not take effect; an upload only when its body is bytes (a stream is read
 * once; a repeated upload is harmless otherwise: the newest file of a name wins). Rejects with
 * `http_error` (`details.status`), `unexpected_response` for a shape it cannot read, `cancelled`
 * (or the signal's reason) when the signal fires.
 */
export class CmaFilesHttp {
  constructor(
    private readonly http: AxiosInstance | LazyHttpClient,
    private readonly factory: HttpClientFactory,
    private readonly opts: CmaFilesHttpOptions,
    private readonly logger: Logger,
  ) {}

  /** Every file of `GET /v1/files?scope_id=<sessionId>` (all pages). */
  listSessionFiles(sessionId: string, signal: AbortSignal): Promise<WireMap[]> {
    return this.walk('/v1/files', { scope_id: sessionId }, this.bothBetas(), signal);
  }

  /** Every resource of `GET /v1/sessions/{id}/resources` (all pages). */
  listResources(sessionId: string, signal: AbortSignal): Promise<WireMap[]> {
    return this.walk(`/v1/sessions/${enc(sessionId)}/resources`, {}, this.opts.beta, signal);
  }

  /** `GET /v1/files/{id}`: the file's metadata. */
  getFile(fileId: string, signal: AbortSignal): Promise<WireMap> {
    return this.json('GET', `/v1/files/${enc(fileId)}`, { beta: this.bothBetas(), signal, retry: isTransientError });
  }

  /** `DELETE /v1/files/{id}`. */
  async deleteFile(fileId: string, signal: AbortSignal): Promise<void> {
    await this.json('DELETE', `/v1/files/${enc(fileId)}`, { beta: this.bothBetas(), signal, retry: isTransientError });
  }

  /** `DELETE /v1/sessions/{id}/resources/{resource_id}`. */
  async deleteResource(sessionId: string, resourceId: string, signal: AbortSignal): Promise<void> {
    await this.json('DELETE', `/v1/sessions/${enc(sessionId)}/resources/${enc(resourceId)}`, { beta: this.opts.beta, signal, retry: isTransientError });
  }

  /** `POST /v1/sessions/{id}/resources` `{type:"file", file_id, mount_path}`. */
  addFileResource(sessionId: string, fileId: string, mountPath: string, signal: AbortSignal): Promise<WireMap> {
    return this.json('POST', `/v1/sessions/${enc(sessionId)}/resources`, {
      beta: this.opts.beta,
      body: JSON.stringify({ type: 'file', file_id: fileId, mount_path: mountPath }),
      signal,
      retry: isUnprocessed,
    });
  }

  /**
   * `POST /v1/files`: a multipart body with one `file` part named `filename`, streamed from
   * `body` (never held whole). `size` (or a bytes body) sets the content length; otherwise the
   * body goes out chunked. `onProgress` hears the bytes of `body` sent so far.
   */
  upload(
    filename: string,
    body: ArtifactBody,
    o: { readonly contentType: string; readonly size?: number; readonly signal: AbortSignal; readonly onProgress?: (sent: number) => void },
  ): Promise<WireMap> {
    const boundary = `agentrx-${randomBytes(12).toString('hex')}`;
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename.replace(/"/g, '%22')}"\r\nContent-Type: ${o.contentType}\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const size = isReplayable(body) ? byteLengthOf(body) : o.size;
    const multipart = async function* (): AsyncGenerator<Buffer> {
      yield head;
      let sent = 0;
      for await (const chunk of bytesOf(body)) {
        yield chunk;
        sent += chunk.length;
        o.onProgress?.(sent);
      }
      yield tail;
    };
    return this.json('POST', '/v1/files', {
      beta: FILES_BETA,
      body: () => toReadable(multipart()),
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        ...(size !== undefined ? { 'content-length': String(head.length + size + tail.length) } : {}),
      },
      signal: o.signal,
      retry: isReplayable(body) ? isTransientError : () => false,
    });
  }

  /**
   * `GET /v1/files/{id}/content`: resolves with the body once the service answered 2xx (retried
   * like any GET until then). The body errors with an AgentRxError (`cancelled` when `signal`
   * fires, `stream_error` on a drop); `requestTimeoutMs` bounds the wait for the headers.
   */
  async download(fileId: string, signal: AbortSignal): Promise<{ body: Readable; size: number | undefined }> {
    const path = `/v1/files/${enc(fileId)}/content`;
    const res = await withRetry(
      async () => {
        let r: AxiosResponse<Readable>;
        try {
          r = await streamRequest(this.factory, await clientOf(this.http), {
            method: 'GET',
            url: path,
            headers: { 'anthropic-beta': this.bothBetas(), accept: 'application/binary' },
            validateStatus: () => true,
            signal,
            timeout: this.opts.requestTimeoutMs,
          });
        } catch (e) {
          throw transportError('GET', path, e, signal);
        }
        if (r.status >= 200 && r.status < 300) return r;
        throw statusError('GET', path, r.status, await readText(r.data), r.headers);
      },
      { ...this.retryOptions('GET', path, signal), isRetryable: isTransientError },
    );
    const length = Number(headerOf(res.headers, 'content-length'));
    const body = readableOf(res.data as AsyncIterable<Buffer>, (e) =>
      signal.aborted
        ? abortReason(signal)
        : isAgentRxError(e)
          ? e
          : new AgentRxError('stream_error', `downloading ${path} broke off: ${e instanceof Error ? e.message : String(e)}`, { path }),
    );
    return { body, size: Number.isFinite(length) && length >= 0 ? length : undefined };
  }

  /** The betas of list, download and delete: the Files API's and the provider's, comma-joined. */
  private bothBetas(): string {
    return this.opts.beta.includes(FILES_BETA) ? this.opts.beta : `${FILES_BETA},${this.opts.beta}`;
  }

  private async walk(path: string, query: Record<string, string>, beta: string, signal: AbortSignal): Promise<WireMap[]> {
    const out: WireMap[] = [];
    const used = new Set<string>();
    let page: string | undefined;
    for (;;) {
      const body = await this.json('GET', path, {
        beta,
        query: { ...query, limit: this.opts.listPageSize, ...(page !== undefined ? { page } : {}) },
        signal,
        retry: isTransientError,
      });
      const data = body['data'];
      if (!Array.isArray(data)) {
        throw new AgentRxError('unexpected_response', `GET ${path} answered without a "data" array (keys: ${Object.keys(body).join(', ') || 'none'})`, {
          path,
        });
      }
      out.push(...data.filter(isMap));
      const next = body['next_page'];
      if (typeof next !== 'string' || next.trim() === '') return out;
      if (used.has(next)) throw new AgentRxError('unexpected_response', `GET ${path} repeated a page cursor; stopping instead of looping`, { path });
      used.add(next);
      page = next;
    }
  }

  private async json(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    o: {
      beta: string;
      body?: string | (() => Readable);
      headers?: Record<string, string>;
      query?: Record<string, string | number>;
      signal: AbortSignal;
      retry: (e: unknown) => boolean;
    },
  ): Promise<WireMap> {
    const attempt = async (): Promise<WireMap> => {
      let res: AxiosResponse<string>;
      try {
        res = await (
          await clientOf(this.http)
        ).request<string>({
          method,
          url: path,
          params: o.query,
          data: typeof o.body === 'function' ? o.body() : o.body,
          headers: { 'anthropic-beta': o.beta, ...o.headers },
          responseType: 'text',
          transformResponse: (x: unknown) => x,
          validateStatus: () => true,
          maxBodyLength: Infinity,
          maxContentLength: Infinity,
          signal: o.signal,
        });
      } catch (e) {
        throw transportError(method, path, e, o.signal);
      }
      return jsonMapOf(method, path, res, 'unexpected_response');
    };
    return withRetry(attempt, { ...this.retryOptions(method, path, o.signal), isRetryable: o.retry });
  }

  private retryOptions(method: string, path: string, signal: AbortSignal) {
    return {
      maxRetries: this.opts.maxRetries,
      baseMs: this.opts.retryBaseMs,
      signal,
      onRetry: (info: { retry: number; delayMs: number; error: unknown }) =>
        this.logger.debug('claude-managed-agents: retrying a files call', {
          method,
          path,
          retry: info.retry,
          delayMs: info.delayMs,
          error: (info.error as Error).message,
        }),
    };
  }
}

function toReadable(chunks: AsyncGenerator<Buffer>): Readable {
  return readableOf(chunks, (e) => (e instanceof Error ? e : new Error(String(e))));
}

async function readText(body: Readable, max = 16_384): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body as AsyncIterable<Buffer | string>) {
      if (text.length < max) text += chunk.toString();
    }
  } catch {
    // what arrived is enough for the message
  }
  return text;
}

function enc(s: string): string {
  return encodeURIComponent(s);
}
