import type { Readable } from 'node:stream';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { AgentRxError } from '../../../core/errors.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds, jsonText, jsonTextMayExceed } from '../../../core/util/json-depth.js';
import { sharedScheduler, type TaskScheduler } from '../../../core/util/time-slice-scheduler.js';

/** How long the rest of a body may take to end after `[DONE]` before it is destroyed. */
const DRAIN_AFTER_DONE_MS = 1_000;
/** Body text waiting for the scheduler beyond which the body is paused (backpressure). */
const PAUSE_AT_CHARS = 64 * 1024;
/**
 * Deepest chunk (or whole completion) accepted: tool-call arguments
 * (`choices[].delta.tool_calls[].function.arguments`, 7 levels down) may nest `MAX_JSON_DEPTH`
 * levels more.
 */
const MAX_CHUNK_DEPTH = MAX_JSON_DEPTH + 8;

/**
 * Wire helpers of the `local` provider: reading an OpenAI `chat.completion.chunk` SSE stream and
 * folding its chunks into the same `{message, finish_reason, usage}` a non-streamed completion
 * carries. Tolerates the quirks of OpenAI-compatible servers (see `ChunkAccumulator`).
 */

/** A wire map (string-keyed, verbatim JSON). */
export type WireMap = Record<string, unknown>;

/** What one model call produced, whether streamed or not. */
export interface ChatCompletionResult {
  /** The assistant message: `{role:'assistant', content, tool_calls?}` (OpenAI shape). */
  readonly message: WireMap;
  readonly finish_reason: unknown;
  readonly usage: unknown;
  /** True when folded from streamed chunks. */
  readonly streamed: boolean;
}

/**
 * What one tool-call delta of a chunk added to its call: the call's `index` (the wire index, or
 * the one given to a delta without it), the call's id and name as known so far, and the piece of
 * arguments text this delta appended (`replace`: decoded arguments, which replace the text whole).
 */
export interface CallFragment {
  readonly index: number;
  readonly id: string | undefined;
  readonly name: string;
  readonly argsDelta: string;
  readonly replace: boolean;
}

/** Shared empty result of `add`: most chunks carry no tool call. */
const NO_FRAGMENTS: readonly CallFragment[] = [];

interface PartialCall {
  index: number;
  id?: string;
  name: string;
  args: string;
  /** Saw at least one `arguments` string (a `null` first delta is not one). */
  sawArgs: boolean;
}

/**
 * Folds streamed `chat.completion.chunk` objects into one assistant message. Tool-call deltas are
 * merged by `index` (parallel calls may interleave); a delta without `index` is matched by `id`,
 * else it continues the last call. `arguments: null` is treated as "nothing yet"; a repeated `id`
 * or `name` on a later delta (servers that echo them, or a finish chunk carrying an empty
 * arguments delta) never creates a second call. Usage is taken from whichever chunk carries it
 * (normally the last one, with `choices: []`).
 */
export class ChunkAccumulator {
  private content = '';
  private sawContent = false;
  private readonly calls = new Map<number, PartialCall>();
  private finishReason: unknown = undefined;
  private usage: unknown = undefined;
  private lastIndex: number | undefined;
  private sawChoice = false;

  /**
   * Adds one parsed chunk. Ignores anything that is not chunk-shaped. Returns what its tool-call
   * deltas added, one fragment per delta that reached a call, in order (for streaming them on).
   */
  add(chunk: WireMap): readonly CallFragment[] {
    if (chunk['usage'] !== undefined && chunk['usage'] !== null) this.usage = chunk['usage'];
    const choices = chunk['choices'];
    if (!Array.isArray(choices) || choices.length === 0) return NO_FRAGMENTS;
    const choice = (choices.find((c) => isMap(c) && (c['index'] === 0 || c['index'] === undefined)) ?? choices[0]) as unknown;
    if (!isMap(choice)) return NO_FRAGMENTS;
    this.sawChoice = true;
    if (typeof choice['finish_reason'] === 'string') this.finishReason = choice['finish_reason'];
    const delta = choice['delta'];
    if (!isMap(delta)) return NO_FRAGMENTS;
    if (typeof delta['content'] === 'string') {
      this.content += delta['content'];
      this.sawContent = true;
    }
    const toolCalls = delta['tool_calls'];
    if (!Array.isArray(toolCalls)) return NO_FRAGMENTS;
    const fragments: CallFragment[] = [];
    for (const tc of toolCalls) {
      const fragment = isMap(tc) ? this.addToolCallDelta(tc) : undefined;
      if (fragment !== undefined) fragments.push(fragment);
    }
    return fragments;
  }

  private addToolCallDelta(tc: WireMap): CallFragment | undefined {
    const id = typeof tc['id'] === 'string' && tc['id'] !== '' ? tc['id'] : undefined;
    let entry: PartialCall | undefined;
    if (typeof tc['index'] === 'number') {
      entry = this.calls.get(tc['index']);
      if (!entry) {
        entry = { index: tc['index'], name: '', args: '', sawArgs: false };
        this.calls.set(tc['index'], entry);
      }
    } else if (id !== undefined) {
      entry = [...this.calls.values()].find((c) => c.id === id);
      if (!entry) {
        const index = this.calls.size === 0 ? 0 : Math.max(...this.calls.keys()) + 1;
        entry = { index, name: '', args: '', sawArgs: false };
        this.calls.set(index, entry);
      }
    } else {
      entry = this.lastIndex === undefined ? undefined : this.calls.get(this.lastIndex);
      if (!entry) return undefined;
    }
    this.lastIndex = entry.index;
    if (id !== undefined && entry.id === undefined) entry.id = id;
    const fn = tc['function'];
    let argsDelta = '';
    let replace = false;
    if (isMap(fn)) {
      if (typeof fn['name'] === 'string' && fn['name'] !== '' && entry.name === '') entry.name = fn['name'];
      const args = fn['arguments'];
      if (typeof args === 'string') {
        entry.args += args;
        entry.sawArgs = true;
        argsDelta = args;
      } else if (isMap(args)) {
        // A server that sends decoded arguments sends them whole (written iteratively: any depth).
        entry.args = jsonText(args);
        entry.sawArgs = true;
        argsDelta = entry.args;
        replace = true;
      }
    }
    return { index: entry.index, id: entry.id, name: entry.name, argsDelta, replace };
  }

  /** The folded result. Calls are ordered by `index`; a call without an id gets `newId()`. */
  result(newId: () => string): ChatCompletionResult {
    const calls = [...this.calls.values()].sort((a, b) => a.index - b.index);
    const message: WireMap = {
      role: 'assistant',
      content: this.sawContent && this.content !== '' ? this.content : calls.length > 0 ? null : this.content,
    };
    if (calls.length > 0) {
      message['tool_calls'] = calls.map((c) => ({
        id: c.id ?? newId(),
        type: 'function',
        function: { name: c.name, arguments: c.sawArgs ? c.args : '' },
      }));
    }
    return { message, finish_reason: this.finishReason, usage: this.usage, streamed: true };
  }

  /** True once a chunk carried a finish reason. */
  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  /** False while no chunk carried a choice: a stream of `choices: []` chunks holds no answer at all. */
  get hasChoices(): boolean {
    return this.sawChoice;
  }
}

/** Options of `readChatStream`. */
export interface ReadChatStreamOptions {
  /** Longest silence between two reads of the body; exceeding it rejects with `timeout`. */
  readonly idleTimeoutMs: number;
  /** Called with each parsed chunk, in order, as it arrives. */
  readonly onChunk: (chunk: WireMap) => void;
  /** `POST <url>` for error messages (no secrets). */
  readonly target: string;
  /** Aborting rejects promptly with `cancelled` and destroys the body. */
  readonly signal: AbortSignal;
  /** Where received body text is parsed and `onChunk` called. Default: the shared scheduler. */
  readonly scheduler?: TaskScheduler;
  /**
   * Longest frame buffered while waiting for its end (see `LocalProviderOptionsClass.maxFrameBytes`),
   * counted in UTF-16 code units of the decoded text. Unset: no cap.
   */
  readonly maxFrameBytes?: number;
}

/**
 * Reads an SSE body of `chat.completion.chunk` frames until `data: [DONE]` (or a clean end after a
 * finish reason). Rejects with `AgentRxError`:
 * - `timeout` when the body is silent longer than `idleTimeoutMs`;
 * - `stream_error` for a non-JSON data frame, an error frame, a frame longer than
 *   `maxFrameBytes`, a chunk nested too deep, or a body that ends or breaks before completion.
 *   `details.chunks` counts the chunks delivered before the failure and `details.transient` is
 *   true only for a break before the first chunk (safe to retry).
 * A chunk whose decoded (object) tool-call arguments nest too deep gets them as JSON text, as
 * streaming servers normally send them: `toToolUse` then refuses them as bad input.
 * The body is destroyed on every failure; on success the rest of the body is discarded.
 *
 * Received text is not parsed in the socket's callback but queued and handled by a scheduler task
 * (`opts.scheduler`), so that hundreds of streams readable in the same loop turn are processed in
 * time slices instead of one long block. Per stream, text is handled in arrival order, and the
 * end, close or break of a body is looked at only after the text received before it. More than 64 KiB of
 * queued text pauses the body until it is handled. Nothing is delivered after a cancellation.
 */
export function readChatStream(body: Readable, opts: ReadChatStreamOptions): Promise<{ chunks: number }> {
  return new Promise((resolve, reject) => {
    let chunks = 0;
    let settled = false;
    let finishSeen = false;
    let idleTimer: NodeJS.Timeout | undefined;
    const scheduler = opts.scheduler ?? sharedScheduler;
    /** Received text and end/close/error handlers, in arrival order, waiting for `drain`. */
    let queued: (string | (() => void))[] = [];
    let queuedChars = 0;
    let drainScheduled = false;
    let paused = false;

    const cleanup = (): void => {
      settled = true;
      queued = [];
      if (idleTimer) clearTimeout(idleTimer);
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('close', onClose);
      opts.signal.removeEventListener('abort', onAbort);
      // Swallow late errors of a body we no longer read.
      body.on('error', noop);
    };
    const fail = (error: AgentRxError): void => {
      if (settled) return;
      cleanup();
      body.destroy();
      reject(error);
    };
    const succeed = (): void => {
      if (settled) return;
      cleanup();
      if (!body.readableEnded) {
        // Drain the tail (the chunked terminator usually follows [DONE]) so the keep-alive
        // connection can be reused; a server that keeps the body open gets it destroyed.
        const drainLimit = setTimeout(() => body.destroy(), DRAIN_AFTER_DONE_MS);
        drainLimit.unref();
        body.once('end', () => clearTimeout(drainLimit));
        body.once('close', () => clearTimeout(drainLimit));
        body.resume();
      }
      resolve({ chunks });
    };
    const armIdle = (): void => {
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        fail(
          new AgentRxError('timeout', `The model stream from ${opts.target} was idle for more than ${opts.idleTimeoutMs} ms (after ${chunks} chunks)`, {
            kind: 'idle',
            idleTimeoutMs: opts.idleTimeoutMs,
            chunks,
            transient: false,
          }),
        );
      }, opts.idleTimeoutMs);
    };
    const broken = (why: string): AgentRxError =>
      new AgentRxError('stream_error', `The model stream from ${opts.target} ${why} after ${chunks} chunks`, { chunks, transient: chunks === 0 });

    const parser = createParser({
      ...(opts.maxFrameBytes !== undefined ? { maxBufferSize: opts.maxFrameBytes } : {}),
      onError: (e) => {
        if (e.type !== 'max-buffer-size-exceeded' || opts.maxFrameBytes === undefined) return;
        fail(
          new AgentRxError(
            'stream_error',
            `an SSE frame exceeded maxFrameBytes (${opts.maxFrameBytes} bytes); the model stream from ${opts.target} sent that much without ending a frame (after ${chunks} chunks). ` +
              'An OpenAI-compatible server never sends such frames: check what answers at baseUrl, or raise providers.local.maxFrameBytes',
            { chunks, maxFrameBytes: opts.maxFrameBytes, transient: false },
          ),
        );
      },
      onEvent: (ev: EventSourceMessage) => {
        if (settled) return;
        const data = ev.data.trim();
        if (data === '[DONE]') {
          succeed();
          return;
        }
        if (data === '') return;
        let parsed: unknown;
        try {
          parsed = JSON.parse(data);
        } catch {
          fail(new AgentRxError('stream_error', `The model stream from ${opts.target} sent a malformed chunk (not JSON) after ${chunks} chunks: ${truncate(data, 120)}`, { chunks, transient: false }));
          return;
        }
        if (!isMap(parsed)) {
          fail(new AgentRxError('stream_error', `The model stream from ${opts.target} sent a chunk that is not a JSON object after ${chunks} chunks`, { chunks, transient: false }));
          return;
        }
        // The walk only when the text could nest that deep (a chunk holds a handful of brackets).
        if (jsonTextMayExceed(data, MAX_CHUNK_DEPTH) && jsonDepthExceeds(parsed, MAX_CHUNK_DEPTH)) {
          stringifyDecodedArguments(parsed);
          if (jsonDepthExceeds(parsed, MAX_CHUNK_DEPTH)) {
            fail(new AgentRxError('stream_error', `The model stream from ${opts.target} sent a chunk nested deeper than ${MAX_CHUNK_DEPTH} levels after ${chunks} chunks`, { chunks, transient: false }));
            return;
          }
        }
        if (ev.event === 'error' || (parsed['error'] !== undefined && parsed['choices'] === undefined)) {
          fail(new AgentRxError('stream_error', `The model stream from ${opts.target} reported an error after ${chunks} chunks: ${truncate(errorText(parsed), 300)}`, { chunks, transient: false }));
          return;
        }
        chunks++;
        const choices = parsed['choices'];
        if (Array.isArray(choices) && choices.some((c) => isMap(c) && typeof c['finish_reason'] === 'string')) finishSeen = true;
        opts.onChunk(parsed);
      },
    });

    const drain = (): void => {
      drainScheduled = false;
      const items = queued;
      queued = [];
      queuedChars = 0;
      for (const item of items) {
        if (settled) return;
        if (typeof item === 'string') parser.feed(item);
        else item();
      }
      if (paused && !settled) {
        paused = false;
        body.resume();
      }
    };
    const enqueue = (item: string | (() => void)): void => {
      queued.push(item);
      if (!drainScheduled) {
        drainScheduled = true;
        scheduler.schedule(drain);
      }
    };
    const onData = (text: string): void => {
      if (settled) return;
      armIdle();
      enqueue(text);
      queuedChars += text.length;
      if (queuedChars >= PAUSE_AT_CHARS && !paused) {
        paused = true;
        body.pause();
      }
    };
    /** Runs `handle` once the text received before it has been handled. */
    const afterQueued = (handle: () => void): void => {
      if (settled) return;
      if (queued.length > 0) enqueue(handle);
      else handle();
    };
    const onEnd = (): void =>
      afterQueued(() => {
        // Servers that omit [DONE] still end cleanly after the finish reason.
        if (finishSeen) succeed();
        else fail(broken('ended before the completion finished'));
      });
    const onClose = (): void => afterQueued(() => fail(broken('was closed before the completion finished')));
    const onError = (): void => afterQueued(() => fail(broken('broke off (connection lost)')));
    const onAbort = (): void => {
      fail(new AgentRxError('cancelled', 'The model call was cancelled'));
    };

    if (opts.signal.aborted) {
      onAbort();
      return;
    }
    body.setEncoding('utf8');
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('close', onClose);
    body.on('error', onError);
    opts.signal.addEventListener('abort', onAbort, { once: true });
    armIdle();
  });
}

/**
 * Reads a whole (small) body as text, up to `maxChars` (the rest is discarded). Gives up after
 * `timeoutMs` of silence (destroying the body) and resolves with what it has.
 */
export function readBodyText(body: Readable, maxChars = 65_536, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      resolve(text.slice(0, maxChars));
    };
    const arm = (): void => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        body.destroy();
        done();
      }, timeoutMs);
    };
    body.setEncoding('utf8');
    body.on('data', (s: string) => {
      arm();
      if (text.length < maxChars) text += s;
    });
    body.on('end', done);
    body.on('error', done);
    body.on('close', done);
    arm();
  });
}

/**
 * Parses a non-streamed `chat.completion` body. Only `choices[0]` is used. Throws
 * `AgentRxError('provider_error')` when the shape is not `{choices:[{message, finish_reason}]}`,
 * when `choices` is empty (`noChoicesError`), or when the body nests deeper than a chunk may
 * (decoded tool-call arguments nested too deep are turned into JSON text first, as for chunks).
 */
export function parseChatCompletion(text: string, target: string): ChatCompletionResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AgentRxError('provider_error', `Malformed chat response from ${target}: not JSON: ${truncate(text, 200)}`, { transient: false });
  }
  if (isMap(parsed) && Array.isArray(parsed['choices']) && parsed['choices'].length === 0) throw noChoicesError(target);
  if (isMap(parsed) && jsonTextMayExceed(text, MAX_CHUNK_DEPTH) && jsonDepthExceeds(parsed, MAX_CHUNK_DEPTH)) {
    stringifyDecodedArguments(parsed);
    if (jsonDepthExceeds(parsed, MAX_CHUNK_DEPTH)) {
      throw new AgentRxError('provider_error', `Malformed chat response from ${target}: nested deeper than ${MAX_CHUNK_DEPTH} levels`, { transient: false });
    }
  }
  const choice = isMap(parsed) && Array.isArray(parsed['choices']) ? (parsed['choices'][0] as unknown) : undefined;
  if (!isMap(parsed) || !isMap(choice) || !isMap(choice['message'])) {
    throw new AgentRxError('provider_error', `Malformed chat response from ${target}: expected {choices:[{message, finish_reason}]}: ${truncate(text, 200)}`, {
      transient: false,
    });
  }
  return { message: choice['message'], finish_reason: choice['finish_reason'] ?? undefined, usage: parsed['usage'] ?? undefined, streamed: false };
}

/**
 * The failure of a completion that holds no choice at all (`choices: []`, streamed or not): the
 * server answered 200 but produced no answer. Code `provider_error`, `details.reason`
 * `no_choices`; not retried.
 */
export function noChoicesError(target: string, chunks?: number): AgentRxError {
  return new AgentRxError(
    'provider_error',
    `${target} returned a completion with no choices${chunks === undefined ? '' : ` (${chunks} chunks)`}: the server produced no answer. ` +
      "Check the server's log (a model that failed to load, or a filter that dropped the answer, can do this).",
    { reason: 'no_choices', ...(chunks === undefined ? {} : { chunks }), transient: false },
  );
}

/** The human-readable message of an OpenAI-style error body (`{error:{message}}`, `{error:"…"}`, `{message}`). */
export function errorText(body: unknown): string {
  if (typeof body === 'string') {
    try {
      return errorText(JSON.parse(body));
    } catch {
      return body;
    }
  }
  if (!isMap(body)) return '';
  const err = body['error'];
  if (typeof err === 'string') return err;
  if (isMap(err) && typeof err['message'] === 'string') return err['message'];
  if (typeof body['message'] === 'string') return body['message'];
  if (typeof body['detail'] === 'string') return body['detail'];
  return jsonText(body);
}

/**
 * Replaces decoded (object or array) tool-call arguments of a chunk (`choices[].delta`) or a
 * completion (`choices[].message`) by their JSON text, in place.
 */
function stringifyDecodedArguments(body: WireMap): void {
  const choices = Array.isArray(body['choices']) ? (body['choices'] as unknown[]) : [];
  for (const choice of choices) {
    const message = isMap(choice) ? (choice['delta'] ?? choice['message']) : undefined;
    const calls = isMap(message) && Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]) : [];
    for (const call of calls) {
      const fn = isMap(call) ? call['function'] : undefined;
      if (isMap(fn) && typeof fn['arguments'] === 'object' && fn['arguments'] !== null) fn['arguments'] = jsonText(fn['arguments']);
    }
  }
}

export function isMap(v: unknown): v is WireMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…`;
}

function noop(): void {}
