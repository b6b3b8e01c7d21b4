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

/** Decodes one whole frame (tests of the emulator itself). */
export function decodeFrame(bytes: Uint8Array): { headers: Record<string, unknown>; body: unknown } {
  const m = codec.decode(bytes);
  const headers = Object.fromEntries(Object.entries(m.headers).map(([k, v]) => [k, v.value]));
  return { headers, body: JSON.parse(toUtf8(m.body)) as unknown };
}
