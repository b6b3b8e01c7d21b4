/**
 * Telling "the host said" from "we could not decode" on the `InvokeHarness` event stream.
 *
 * The SDK decodes event-stream frames lazily and throws whatever went wrong, in one stream of
 * errors: an exception frame the harness sent (a modeled exception, or an Error named after an
 * unmodeled `:exception-type`), but also a `SyntaxError` for a payload that is not JSON — even the
 * body of an exception frame, whose type is then lost — and a plain Error for a frame whose
 * checksum does not match. This module wraps the client's event-stream marshaller so that every
 * frame the SDK hands to its deserializer is seen with its headers: a frame that fails to
 * deserialize becomes a typed error saying which kind of frame it was — `HarnessExceptionFrame`
 * (the host reported an exception; its `:exception-type` kept even when the body is not JSON) or
 * `FrameDecodeError` (agentrx could not read an event frame) — and `decodeFailureOf` recognizes
 * the codec's own failures (checksums, framing) wherever in the stream they happen.
 */

/** An exception frame the harness sent whose body the SDK could not deserialize. */
export class HarnessExceptionFrame extends Error {
  /**
   * @param exceptionType The frame's `:exception-type` header, verbatim.
   * @param detail The body's `message` when it is JSON with one, else the body text.
   */
  constructor(
    readonly exceptionType: string,
    readonly detail: string,
  ) {
    super(`${exceptionType}: ${detail}`);
    this.name = 'HarnessExceptionFrame';
  }
}

/** Which part of a frame could not be decoded. */
export type FrameDecodeKind = 'checksum' | 'payload' | 'frame';

/** A frame agentrx could not decode (not something the harness reported). */
export class FrameDecodeError extends Error {
  /**
   * @param kind `checksum` (prelude or message CRC mismatch), `payload` (an event frame whose body
   *   could not be deserialized), `frame` (anything else about the framing or headers).
   * @param reason The decoder's message.
   * @param eventType The `:event-type` of the frame, when known.
   */
  constructor(
    readonly kind: FrameDecodeKind,
    readonly reason: string,
    readonly eventType?: string,
  ) {
    super(eventType !== undefined ? `${kind} of a ${eventType} frame: ${reason}` : `${kind}: ${reason}`);
    this.name = 'FrameDecodeError';
  }
}

/** The part of the SDK's event-stream marshaller this module wraps. */
export interface EventStreamMarshallerLike {
  deserialize(body: unknown, deserializer: (event: Record<string, FrameLike>) => Promise<unknown>): AsyncIterable<unknown>;
  serialize(input: unknown, serializer: unknown): unknown;
}

/** One decoded frame as the SDK hands it to its deserializer. */
interface FrameLike {
  readonly headers?: Readonly<Record<string, { readonly value?: unknown } | undefined>>;
  readonly body?: Uint8Array;
}

/**
 * Wraps `inner` so that a frame whose deserialization fails throws a `HarnessExceptionFrame`
 * (an `exception` frame) or a `FrameDecodeError` (an `event` frame) instead of the bare
 * `SyntaxError`/`TypeError` of the parser. Frames that deserialize are untouched.
 */
export function decodingAwareMarshaller(inner: EventStreamMarshallerLike): EventStreamMarshallerLike {
  return {
    deserialize: (body, deserializer) =>
      inner.deserialize(body, async (event) => {
        try {
          return await deserializer(event);
        } catch (e) {
          throw classifyFrameFailure(event, e);
        }
      }),
    serialize: (input, serializer) => inner.serialize(input, serializer),
  };
}

function classifyFrameFailure(event: Record<string, FrameLike>, e: unknown): Error {
  const key = Object.keys(event).find((k) => k !== '__type');
  const frame = key !== undefined ? event[key] : undefined;
  const messageType = frame?.headers?.[':message-type']?.value;
  const reason = e instanceof Error ? e.message : String(e);
  if (messageType === 'exception') {
    const type = frame?.headers?.[':exception-type']?.value;
    return new HarnessExceptionFrame(typeof type === 'string' && type !== '' ? type : (key ?? 'UnknownException'), bodyDetail(frame?.body));
  }
  const eventType = frame?.headers?.[':event-type']?.value;
  return new FrameDecodeError('payload', reason, typeof eventType === 'string' ? eventType : key);
}

/** The body's `message` when it is a JSON object with one, else the body text (at most 1 000 characters). */
function bodyDetail(body: Uint8Array | undefined): string {
  const text = body ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8') : '';
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { message?: unknown }).message === 'string')
      return (parsed as { message: string }).message;
  } catch {
    // not JSON: the text itself is the detail
  }
  const trimmed = text.trim();
  return trimmed === '' ? '(empty body)' : trimmed.length > 1_000 ? `${trimmed.slice(0, 1_000)}…` : trimmed;
}

const JS_ERRORS = new Set(['Error', 'RangeError', 'TypeError', 'SyntaxError', 'EvalError', 'URIError', 'ReferenceError']);
const SDK_SUFFIX = /\s*Deserialization error: to see the raw response[\s\S]*$/;
const SDK_WRAPPER = /^AWS SDK error wrapper for (\w+): /;

/**
 * The decode failure `e` is, if it is one: a `FrameDecodeError` (raised by the wrapped
 * marshaller), or an error the event-stream codec raised for a frame it could not read — a
 * checksum mismatch, or any built-in JavaScript error (`RangeError` for a frame whose lengths run
 * past its bytes, …) that is not an exception the harness sent. Undefined otherwise (transport
 * errors, HTTP errors and host exceptions are told apart before this is asked).
 *
 * @param inStream True when the SDK had already returned the response (the error came from
 *   iterating its stream); errors of `send` itself count only when they carry a 2xx status.
 */
export function decodeFailureOf(e: unknown, inStream: boolean): FrameDecodeError | undefined {
  if (e instanceof FrameDecodeError) return e;
  if (e instanceof HarnessExceptionFrame) return undefined;
  const o = (typeof e === 'object' && e !== null ? e : {}) as {
    name?: unknown;
    message?: unknown;
    $fault?: unknown;
    code?: unknown;
    $metadata?: { httpStatusCode?: unknown };
  };
  if (o.$fault !== undefined || o.code !== undefined) return undefined;
  const raw = typeof o.message === 'string' ? o.message : String(e);
  // Only an error raised while reading a 2xx body is about a frame (the SDK reads the first frame
  // inside `send`, and tags what fails there with the response's status and a hint to inspect it).
  const status = o.$metadata?.httpStatusCode;
  if (!inStream && !(typeof status === 'number' && status >= 200 && status < 300) && !SDK_SUFFIX.test(raw)) return undefined;
  // The SDK wraps a non-Error it caught (an error of another realm) as "AWS SDK error wrapper for <name>: …".
  const wrapped = SDK_WRAPPER.exec(raw);
  const name = wrapped ? wrapped[1]! : typeof o.name === 'string' ? o.name : 'Error';
  if (!JS_ERRORS.has(name)) return undefined;
  const message = cleanSdkMessage(wrapped ? raw.slice(wrapped[0].length) : raw);
  if (/checksum/i.test(message)) return new FrameDecodeError('checksum', message);
  return new FrameDecodeError(name === 'SyntaxError' ? 'payload' : 'frame', name === 'Error' ? message : `${name}: ${message}`);
}

/** An SDK error message without the "Deserialization error: to see the raw response…" hint it appends to first-frame failures. */
export function cleanSdkMessage(message: string): string {
  return message.replace(SDK_SUFFIX, '');
}
