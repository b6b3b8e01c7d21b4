import { createHash } from 'node:crypto';
import type { AnthropicEmulatorTurn } from './anthropic-script.js';

/**
 * A scripted turn as the Anthropic Messages emulator answers it: the whole `message` object, or
 * the server-sent events of a streamed answer in the API's order (`message_start`, per block
 * `content_block_start` / `content_block_delta`s / `content_block_stop`, a `ping`, `message_delta`,
 * `message_stop`), text, thinking and tool input split into several small deltas.
 */

type Json = Record<string, unknown>;

/** One content block of an answer, as the non-streamed message carries it. */
export type AnswerBlock =
  | { readonly type: 'thinking'; readonly thinking: string; readonly signature: string }
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'tool_use'; readonly id: string; readonly name: string; readonly input: Readonly<Record<string, unknown>> };

/** The `usage` of an answer (all four counts always present, as in the API's message). */
export interface AnswerUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_read_input_tokens: number;
  readonly cache_creation_input_tokens: number;
}

/** One answer, before it is shaped as a message body or as events. */
export interface AnthropicAnswer {
  /** `msg_e<request>`. */
  readonly id: string;
  /** The requested model, echoed. */
  readonly model: string;
  readonly content: readonly AnswerBlock[];
  readonly stopReason: string;
  readonly usage: AnswerUsage;
}

/** One server-sent event: `event: <event>\ndata: <JSON of data>\n\n`. */
export interface AnswerEvent {
  readonly event: string;
  readonly data: Json;
}

/**
 * The signature the emulator gives a thinking block: a deterministic digest of its text, so a
 * block sent back unchanged verifies and an edited one does not (as the API checks them).
 */
export function thinkingSignature(thinking: string): string {
  return createHash('sha256').update(`agentrx-emulator-thinking\n${thinking}`).digest('base64');
}

/** The answer to `/v1/messages` request `request` (default tool-use ids `toolu_e<request>_<i>`). */
export function buildAnswer(turn: AnthropicEmulatorTurn, request: number, body: Json): AnthropicAnswer {
  const content: AnswerBlock[] = [];
  if (turn.thinking !== undefined) content.push({ type: 'thinking', thinking: turn.thinking, signature: thinkingSignature(turn.thinking) });
  if (turn.text !== undefined) content.push({ type: 'text', text: turn.text });
  const uses = turn.toolUses ?? [];
  uses.forEach((u, i) => content.push({ type: 'tool_use', id: u.id ?? `toolu_e${request}_${i}`, name: u.name, input: u.input }));
  const asked = JSON.stringify([body['system'] ?? '', body['messages'] ?? [], body['tools'] ?? []]);
  const produced = (turn.thinking ?? '') + (turn.text ?? '') + uses.map((u) => u.name + JSON.stringify(u.input)).join('');
  const usage = turn.usage ?? { input_tokens: Math.max(1, Math.ceil(asked.length / 4)), output_tokens: Math.max(1, Math.ceil(produced.length / 4)) };
  return {
    id: `msg_e${request}`,
    model: typeof body['model'] === 'string' ? body['model'] : 'emulator-model',
    content,
    stopReason: turn.stopReason ?? (uses.length > 0 ? 'tool_use' : 'end_turn'),
    usage: {
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
      cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
    },
  };
}

/** The non-streamed `message` object of an answer. */
export function messageBody(a: AnthropicAnswer): Json {
  return {
    id: a.id,
    type: 'message',
    role: 'assistant',
    model: a.model,
    content: a.content.map((b) => ({ ...b })),
    stop_reason: a.stopReason,
    stop_sequence: null,
    usage: { ...a.usage },
  };
}

/** The event sequence of a streamed answer, `message_start` to `message_stop`. */
export function buildEvents(a: AnthropicAnswer): AnswerEvent[] {
  const out: AnswerEvent[] = [];
  const emit = (event: string, data: Json = {}): void => void out.push({ event, data: { type: event, ...data } });
  emit('message_start', {
    message: {
      id: a.id,
      type: 'message',
      role: 'assistant',
      model: a.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: a.usage.input_tokens,
        cache_creation_input_tokens: a.usage.cache_creation_input_tokens,
        cache_read_input_tokens: a.usage.cache_read_input_tokens,
        output_tokens: 1,
      },
    },
  });
  // The API sends its first ping right after the first content_block_start.
  if (a.content.length === 0) emit('ping');
  a.content.forEach((block, index) => {
    const delta = (d: Json): void => emit('content_block_delta', { index, delta: d });
    if (block.type === 'thinking') {
      emit('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      if (index === 0) emit('ping');
      for (const piece of splitText(block.thinking)) delta({ type: 'thinking_delta', thinking: piece });
      delta({ type: 'signature_delta', signature: block.signature });
    } else if (block.type === 'text') {
      emit('content_block_start', { index, content_block: { type: 'text', text: '' } });
      if (index === 0) emit('ping');
      for (const piece of splitText(block.text)) delta({ type: 'text_delta', text: piece });
    } else {
      emit('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      if (index === 0) emit('ping');
      // The API opens every tool input with an empty piece.
      for (const piece of ['', ...splitJson(JSON.stringify(block.input))]) delta({ type: 'input_json_delta', partial_json: piece });
    }
    emit('content_block_stop', { index });
  });
  emit('message_delta', { delta: { stop_reason: a.stopReason, stop_sequence: null }, usage: { output_tokens: a.usage.output_tokens } });
  emit('message_stop');
  return out;
}

/** Splits text into small deltas of up to two words each (concatenation gives the text back). */
function splitText(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? [];
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 2) out.push(words.slice(i, i + 2).join(''));
  if (out.join('') !== text) return text === '' ? [] : [text];
  return out;
}

/** Splits a JSON text into up to three pieces (none of them valid JSON on its own, mostly). */
function splitJson(json: string): string[] {
  if (json.length < 3) return [json];
  const third = Math.ceil(json.length / 3);
  return [json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)].filter((p) => p !== '');
}
