import { createHash } from 'node:crypto';
import type { ResponsesEmulatorTurn } from './responses-script.js';

/**
 * A scripted turn as the Responses emulator answers it: the whole `response` object, or the
 * server-sent events of a streamed answer in the API's order (`response.created`,
 * `response.in_progress`, per output item `response.output_item.added` / its part and delta events /
 * `response.output_item.done`, then `response.completed` or `response.incomplete`), each event's
 * data carrying its `type` and an increasing `sequence_number`.
 */

type Json = Record<string, unknown>;

/** One answer, before it is shaped as a response body or as events. */
export interface ResponsesAnswer {
  /** `resp_e<request>`. */
  readonly id: string;
  /** Seconds since the epoch. */
  readonly createdAt: number;
  /** The final output items, as the non-streamed response carries them. */
  readonly output: readonly Json[];
  readonly status: 'completed' | 'incomplete';
  /** The API's `usage` object (details and total included). */
  readonly usage: Json;
  /** The request fields a response echoes (`model`, `instructions`, `tools`, `temperature`…). */
  readonly echo: Json;
}

/** One server-sent event: `event: <event>\ndata: <JSON of data>\n\n` (`data.type` is `event`). */
export interface AnswerEvent {
  readonly event: string;
  readonly data: Json;
}

/**
 * The `encrypted_content` the emulator gives reasoning item `id`: an opaque, deterministic token
 * bound to the item, so an item sent back unchanged verifies and one with another item's content
 * does not.
 */
export function reasoningContent(id: string): string {
  return `gAAAAA${createHash('sha256').update(`agentrx-emulator-reasoning\n${id}`).digest('base64')}`;
}

/** The answer to `/v1/responses` request `request` (default call ids `call_e<request>_<i>`). */
export function buildAnswer(turn: ResponsesEmulatorTurn, request: number, body: Json): ResponsesAnswer {
  const status = turn.status ?? 'completed';
  const output: Json[] = [];
  if (turn.reasoning !== undefined) {
    const id = `rs_e${request}_0`;
    const include = Array.isArray(body['include']) ? (body['include'] as unknown[]) : [];
    output.push({
      id,
      type: 'reasoning',
      summary: turn.reasoning === '' ? [] : [{ type: 'summary_text', text: turn.reasoning }],
      ...(include.includes('reasoning.encrypted_content') ? { encrypted_content: reasoningContent(id) } : {}),
    });
  }
  if (turn.text !== undefined) {
    output.push({
      id: `msg_e${request}_0`,
      type: 'message',
      status,
      content: [{ type: 'output_text', annotations: [], logprobs: [], text: turn.text }],
      role: 'assistant',
    });
  }
  const calls = turn.functionCalls ?? [];
  calls.forEach((c, i) => {
    const args = typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments);
    output.push({
      id: `fc_e${request}_${i}`,
      type: 'function_call',
      status: 'completed',
      arguments: args,
      call_id: c.callId ?? `call_e${request}_${i}`,
      name: c.name,
    });
  });
  const asked = JSON.stringify([body['instructions'] ?? '', body['input'] ?? '', body['tools'] ?? []]);
  const reasoningTokens = turn.usage?.reasoning_tokens ?? (turn.usage ? 0 : Math.ceil((turn.reasoning ?? '').length / 4));
  const produced = (turn.text ?? '') + calls.map((c) => c.name + JSON.stringify(c.arguments)).join('');
  const input = turn.usage?.input_tokens ?? Math.max(1, Math.ceil(asked.length / 4));
  const out = turn.usage?.output_tokens ?? reasoningTokens + Math.max(1, Math.ceil(produced.length / 4));
  return {
    id: `resp_e${request}`,
    createdAt: Math.floor(Date.now() / 1000),
    output,
    status,
    usage: {
      input_tokens: input,
      input_tokens_details: { cached_tokens: turn.usage?.cached_tokens ?? 0 },
      output_tokens: out,
      output_tokens_details: { reasoning_tokens: reasoningTokens },
      total_tokens: input + out,
    },
    echo: echoOf(body),
  };
}

/** The fields of a request that its response echoes, with the API's defaults. */
function echoOf(body: Json): Json {
  const reasoning = isMap(body['reasoning']) ? body['reasoning'] : {};
  const text = isMap(body['text']) ? body['text'] : {};
  const tools = Array.isArray(body['tools']) ? (body['tools'] as Json[]) : [];
  return {
    instructions: body['instructions'] ?? null,
    max_output_tokens: body['max_output_tokens'] ?? null,
    max_tool_calls: body['max_tool_calls'] ?? null,
    model: body['model'],
    parallel_tool_calls: body['parallel_tool_calls'] ?? true,
    previous_response_id: null,
    prompt_cache_key: body['prompt_cache_key'] ?? null,
    reasoning: { effort: reasoning['effort'] ?? null, summary: reasoning['summary'] ?? null },
    safety_identifier: body['safety_identifier'] ?? null,
    service_tier: 'default',
    store: body['store'] ?? true,
    temperature: body['temperature'] ?? 1,
    text: { format: text['format'] ?? { type: 'text' }, verbosity: text['verbosity'] ?? 'medium' },
    tool_choice: body['tool_choice'] ?? 'auto',
    tools: tools.map((t) => (t['type'] === 'function' ? { description: null, strict: true, ...t } : t)),
    top_logprobs: body['top_logprobs'] ?? 0,
    top_p: body['top_p'] ?? 1,
    truncation: body['truncation'] ?? 'disabled',
  };
}

/**
 * The `response` object of an answer; `over` replaces fields (the in-progress snapshot of
 * `response.created`, a failed response).
 */
export function responseBody(a: ResponsesAnswer, over: Json = {}): Json {
  const { model, ...echo } = a.echo;
  const done = (over['status'] ?? a.status) !== 'in_progress';
  return {
    id: a.id,
    object: 'response',
    created_at: a.createdAt,
    status: a.status,
    background: false,
    completed_at: done ? a.createdAt : null,
    error: null,
    incomplete_details: a.status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    model,
    output: a.output.map((item) => structuredClone(item)),
    ...echo,
    usage: { ...a.usage },
    user: null,
    metadata: {},
    ...over,
  };
}

/** The `response` of a `response.failed` event (or a non-streamed failed answer): `output` is what was finished. */
export function failedBody(a: ResponsesAnswer, output: readonly Json[], message: string): Json {
  return responseBody(a, {
    status: 'failed',
    completed_at: null,
    error: { code: 'server_error', message },
    incomplete_details: null,
    output: [...output],
    usage: null,
  });
}

/** The event sequence of a streamed answer, `response.created` to `response.completed` (or `.incomplete`). */
export function buildEvents(a: ResponsesAnswer): AnswerEvent[] {
  const out: AnswerEvent[] = [];
  const emit = (event: string, data: Json = {}): void => void out.push({ event, data: { type: event, ...data, sequence_number: out.length } });
  const started = responseBody(a, { status: 'in_progress', output: [], usage: null, incomplete_details: null });
  emit('response.created', { response: started });
  emit('response.in_progress', { response: started });
  a.output.forEach((item, output_index) => {
    const item_id = item['id'] as string;
    if (item['type'] === 'reasoning') {
      emit('response.output_item.added', { output_index, item: { id: item_id, type: 'reasoning', summary: [] } });
      (item['summary'] as { text: string }[]).forEach(({ text }, summary_index) => {
        const at = { item_id, output_index, summary_index };
        emit('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
        for (const delta of splitText(text)) emit('response.reasoning_summary_text.delta', { ...at, delta });
        emit('response.reasoning_summary_text.done', { ...at, text });
        emit('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
      });
    } else if (item['type'] === 'message') {
      emit('response.output_item.added', { output_index, item: { id: item_id, type: 'message', status: 'in_progress', content: [], role: 'assistant' } });
      const text = (item['content'] as { text: string }[])[0]!.text;
      const at = { item_id, output_index, content_index: 0 };
      emit('response.content_part.added', { ...at, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } });
      for (const delta of splitText(text)) emit('response.output_text.delta', { ...at, delta, logprobs: [] });
      emit('response.output_text.done', { ...at, text, logprobs: [] });
      emit('response.content_part.done', { ...at, part: { type: 'output_text', annotations: [], logprobs: [], text } });
    } else {
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      const args = item['arguments'] as string;
      for (const delta of splitJson(args)) emit('response.function_call_arguments.delta', { item_id, output_index, delta });
      emit('response.function_call_arguments.done', { item_id, output_index, name: item['name'], arguments: args });
    }
    emit('response.output_item.done', { output_index, item: structuredClone(item) });
  });
  emit(a.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: responseBody(a) });
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
  if (json.length < 3) return json === '' ? [] : [json];
  const third = Math.ceil(json.length / 3);
  return [json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)].filter((p) => p !== '');
}

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
