import { crc32 } from 'node:zlib';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

/**
 * AWS event-stream frames (`application/vnd.amazon.eventstream`) as the AgentCore data plane
 * sends them: binary messages with typed headers and a JSON payload, encoded with the official
 * `@smithy/eventstream-codec` (prelude CRC, header block, payload, message CRC).
 */

const codec = new EventStreamCodec(toUtf8, fromUtf8);

const str = (value: string): { type: 'string'; value: string } => ({ type: 'string', value });

/**
 * An `event` frame: `:event-type` names the Converse event and the payload is the event's JSON
 * body, unwrapped (`{role:'assistant'}` for `messageStart`).
 */
export function eventFrame(eventType: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: { ':message-type': str('event'), ':event-type': str(eventType), ':content-type': str('application/json') },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

/**
 * An `exception` frame: `:exception-type` names a member of the stream union
 * (`validationException`, `internalServerException`, `runtimeClientError`) or any other type
 * (which the SDK surfaces as a plain Error named after it); the payload is `{message, …}`.
 */
export function exceptionFrame(exceptionType: string, payload: Readonly<Record<string, unknown>>): Uint8Array {
  return codec.encode({
    headers: { ':message-type': str('exception'), ':exception-type': str(exceptionType), ':content-type': str('application/json') },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

/** A frame of `messageType` whose body is `body` verbatim (it need not be JSON): for damaged-frame faults. */
export function rawFrame(messageType: 'event' | 'exception', type: string, body: string): Uint8Array {
  const typeHeader = messageType === 'event' ? ':event-type' : ':exception-type';
  return codec.encode({
    headers: { ':message-type': str(messageType), [typeHeader]: str(type), ':content-type': str('application/json') },
    body: fromUtf8(body),
  });
}

/** A copy of `frame` whose message CRC (its last 4 bytes) no longer matches. */
export function withBadChecksum(frame: Uint8Array): Uint8Array {
  const copy = Uint8Array.from(frame);
  copy[copy.length - 1] = copy[copy.length - 1]! ^ 0xff;
  return copy;
}

/**
 * A frame whose checksums are right but whose header block is not: its `:message-type` string
 * header claims 200 bytes and carries 5 (a decoder reading it runs past the block).
 */
export function malformedHeaderFrame(): Uint8Array {
  const name = Buffer.from(':message-type');
  const headers = Buffer.concat([Buffer.from([name.length]), name, Buffer.from([7, 0, 200]), Buffer.from('event')]);
  const body = Buffer.from('{}');
  const total = 12 + headers.length + body.length + 4;
  const frame = Buffer.alloc(total);
  frame.writeUInt32BE(total, 0);
  frame.writeUInt32BE(headers.length, 4);
  frame.writeUInt32BE(crc32(frame.subarray(0, 8)), 8);
  headers.copy(frame, 12);
  body.copy(frame, 12 + headers.length);
  frame.writeUInt32BE(crc32(frame.subarray(0, total - 4)), total - 4);
  return new Uint8Array(frame.buffer, frame.byteOffset, frame.length);
}

/** Decodes one whole frame (tests of the emulator itself). */
export function decodeFrame(bytes: Uint8Array): { headers: Record<string, unknown>; body: unknown } {
  const m = codec.decode(bytes);
  const headers = Object.fromEntries(Object.entries(m.headers).map(([k, v]) => [k, v.value]));
  return { headers, body: JSON.parse(toUtf8(m.body)) as unknown };
}
