import type { EmulatorQuirks, EmulatorTurn } from './openai-script.js';

/**
 * A scripted turn as the chat emulator answers it: the whole `chat.completion` body, or the
 * `chat.completion.chunk` sequence of a streamed answer (text and tool-call arguments split into
 * small deltas, usage in a final `choices: []` chunk when asked), with the quirks applied.
 */

type Json = Record<string, unknown>;

/** One answer, before it is shaped as a body or as chunks. */
export interface Answer {
  readonly id: string;
  readonly created: number;
  readonly model: string;
  readonly text: string | undefined;
  /** Reasoning before the answer (`reasoning_content`). */
  readonly reasoning: string | undefined;
  readonly calls: readonly { id: string; name: string; arguments: string }[];
  readonly finishReason: string;
  readonly usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  /** `choices: []` instead of the answer (see `EmulatorTurn.noChoices`). */
  readonly noChoices: boolean;
}

/** The answer to completion request `completion` (default call ids `call_e<completion>_<i>`). */
export function buildAnswer(turn: EmulatorTurn, completion: number, request: Json, quirks: EmulatorQuirks): Answer {
  const calls = (turn.toolCalls ?? []).map((c, i) => {
    let args = typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments);
    if (quirks.invalidJsonArguments) args = args.slice(0, -1);
    return { id: c.id ?? `call_e${completion}_${i}`, name: c.name, arguments: args };
  });
  const text = turn.text;
  const prompt = Math.max(1, Math.ceil(JSON.stringify(request['messages'] ?? []).length / 4));
  const completionTokens = Math.max(1, Math.ceil(((turn.reasoning ?? '') + (text ?? '') + calls.map((c) => c.name + c.arguments).join('')).length / 4));
  const usage = turn.usage ?? { prompt_tokens: prompt, completion_tokens: completionTokens };
  return {
    id: `chatcmpl-emu${completion}`,
    created: 1_700_000_000 + completion,
    model: typeof request['model'] === 'string' ? request['model'] : 'emulator-model',
    text,
    reasoning: turn.reasoning,
    calls,
    finishReason: turn.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop'),
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    noChoices: turn.noChoices === true,
  };
}

/** The non-streamed `chat.completion` body of an answer. */
export function completionBody(a: Answer): Json {
  const message: Json = { role: 'assistant', content: a.text ?? null, refusal: null, annotations: [] };
  if (a.reasoning !== undefined) message['reasoning_content'] = a.reasoning;
  if (a.calls.length > 0) {
    message['tool_calls'] = a.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  return {
    id: a.id,
    object: 'chat.completion',
    created: a.created,
    model: a.model,
    choices: a.noChoices ? [] : [{ index: 0, message, logprobs: null, finish_reason: a.finishReason }],
    usage: a.usage,
    system_fingerprint: 'fp_emulator',
  };
}

/** The chunk sequence of a streamed answer (without `[DONE]`). */
export function buildChunks(a: Answer, quirks: EmulatorQuirks, includeUsage: boolean): Json[] {
  const chunk = (delta: Json, finish: string | null = null): Json => ({
    id: a.id,
    object: 'chat.completion.chunk',
    created: a.created,
    model: a.model,
    system_fingerprint: 'fp_emulator',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const out: Json[] = [];
  if (a.noChoices) {
    if (includeUsage)
      out.push({
        id: a.id,
        object: 'chat.completion.chunk',
        created: a.created,
        model: a.model,
        system_fingerprint: 'fp_emulator',
        choices: [],
        usage: a.usage,
      });
    return out;
  }
  out.push(chunk({ role: 'assistant', content: '', refusal: null }));
  for (const piece of splitText(a.reasoning ?? '')) out.push(chunk({ reasoning_content: piece }));
  for (const piece of splitText(a.text ?? '')) out.push(chunk({ content: piece }));

  const perCall = a.calls.map((c, index) => {
    const pieces = splitArgs(c.arguments);
    const first: Json = { index, id: c.id, type: 'function', function: { name: c.name, arguments: quirks.nullFirstArguments ? null : '' } };
    return [first, ...pieces.map((p) => ({ index, function: { arguments: p } }))];
  });
  if (quirks.interleaveParallelToolCalls) {
    const longest = Math.max(0, ...perCall.map((p) => p.length));
    for (let i = 0; i < longest; i++) for (const p of perCall) if (p[i]) out.push(chunk({ tool_calls: [p[i]] }));
  } else {
    for (const p of perCall) for (const d of p) out.push(chunk({ tool_calls: [d] }));
  }

  const last = a.calls.length - 1;
  if (quirks.finishWithEmptyArgsDelta && last >= 0) {
    out.push(chunk({ tool_calls: [{ index: last, id: a.calls[last]!.id, type: 'function', function: { arguments: '' } }] }, a.finishReason));
  } else {
    out.push(chunk({}, a.finishReason));
  }
  if (includeUsage) {
    out.push({ id: a.id, object: 'chat.completion.chunk', created: a.created, model: a.model, system_fingerprint: 'fp_emulator', choices: [], usage: a.usage });
  }
  return out;
}

/** Splits text into small deltas of up to two words each (concatenation gives the text back). */
function splitText(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? (text === '' ? [] : [text]);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 2) out.push(words.slice(i, i + 2).join(''));
  const joined = out.join('');
  if (joined !== text) return text === '' ? [] : [text];
  return out;
}

/** Splits an arguments string into up to three pieces. */
function splitArgs(args: string): string[] {
  if (args.length < 3) return args === '' ? [] : [args];
  const third = Math.ceil(args.length / 3);
  return [args.slice(0, third), args.slice(third, 2 * third), args.slice(2 * third)].filter((p) => p !== '');
}
