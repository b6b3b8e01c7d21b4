import { createHash } from 'node:crypto';
import type { GeminiEmulatorTurn } from './gemini-script.js';

/**
 * A scripted turn as the Gemini API emulator answers it: the whole `GenerateContentResponse`, or
 * the chunks of a streamed answer (each a `GenerateContentResponse` holding only its new parts):
 * thought and text in several small pieces, each function call whole in one chunk, the
 * `finishReason` and `usageMetadata` on the last chunk.
 */

type Json = Record<string, unknown>;

/** One answer, before it is shaped as a response body or as chunks. */
export interface GeminiAnswer {
  /** `resp_e<call>`. */
  readonly responseId: string;
  /** The model named in the request path, echoed. */
  readonly modelVersion: string;
  /** The parts of the whole response. */
  readonly parts: readonly Json[];
  /** The parts of each streamed chunk, in order (their concatenation reads as `parts`). */
  readonly chunkParts: readonly (readonly Json[])[];
  readonly finishReason: string;
  readonly usageMetadata: Json;
}

/**
 * The signature the emulator gives the part after a thought: a deterministic digest of the
 * thought, base64 as the API's `thoughtSignature` bytes are.
 */
export function thoughtSignature(thought: string): string {
  return createHash('sha256').update(`agentrx-emulator-thought\n${thought}`).digest('base64');
}

/** The answer to generate request `call` for `model` (the thought part only when the request asks for thoughts). */
export function buildAnswer(turn: GeminiEmulatorTurn, call: number, model: string, body: Json): GeminiAnswer {
  const config = isMap(body['generationConfig']) ? body['generationConfig'] : {};
  const includeThoughts = isMap(config['thinkingConfig']) && config['thinkingConfig']['includeThoughts'] === true;
  const calls = (turn.functionCalls ?? []).map((c) => ({ functionCall: { ...(c.id !== undefined ? { id: c.id } : {}), name: c.name, args: { ...c.args } } }));

  const parts: Json[] = [];
  const chunkParts: Json[][] = [];
  if (turn.thought !== undefined && includeThoughts) {
    parts.push({ text: turn.thought, thought: true });
    for (const piece of splitText(turn.thought)) chunkParts.push([{ text: piece, thought: true }]);
  }
  const answerParts: Json[] = [];
  const answerChunks: Json[][] = [];
  if (turn.text !== undefined) {
    answerParts.push({ text: turn.text });
    for (const piece of splitText(turn.text)) answerChunks.push([{ text: piece }]);
  }
  for (const c of calls) {
    answerParts.push(c);
    answerChunks.push([{ ...c }]);
  }
  if (turn.thought !== undefined) {
    // Gemini 2.5 signs its thinking on the first part after it (an empty text part when there is none).
    const signature = thoughtSignature(turn.thought);
    if (answerParts.length === 0) {
      answerParts.push({ text: '' });
      answerChunks.push([{ text: '' }]);
    }
    answerParts[0] = { ...answerParts[0], thoughtSignature: signature };
    answerChunks[0]![0] = { ...answerChunks[0]![0], thoughtSignature: signature };
  }
  parts.push(...answerParts);
  chunkParts.push(...answerChunks);

  return {
    responseId: `resp_e${call}`,
    modelVersion: model,
    parts,
    chunkParts,
    finishReason: turn.finishReason ?? 'STOP',
    usageMetadata: usageOf(turn, body),
  };
}

/** The whole `GenerateContentResponse` of an answer. */
export function responseBody(a: GeminiAnswer): Json {
  return {
    candidates: [{ content: content(a.parts), finishReason: a.finishReason, index: 0 }],
    usageMetadata: { ...a.usageMetadata },
    modelVersion: a.modelVersion,
    responseId: a.responseId,
  };
}

/** The streamed chunks of an answer: one `GenerateContentResponse` per piece, the last with `finishReason` and `usageMetadata`. */
export function buildChunks(a: GeminiAnswer): Json[] {
  const pieces = a.chunkParts.length > 0 ? a.chunkParts : [[]];
  return pieces.map((parts, i) => {
    const last = i === pieces.length - 1;
    return {
      candidates: [{ content: content(parts), ...(last ? { finishReason: a.finishReason } : {}), index: 0 }],
      ...(last ? { usageMetadata: { ...a.usageMetadata } } : {}),
      modelVersion: a.modelVersion,
      responseId: a.responseId,
    };
  });
}

/** A model `Content`; the API leaves `parts` out when there are none. */
function content(parts: readonly Json[]): Json {
  return parts.length > 0 ? { parts: parts.map((p) => ({ ...p })), role: 'model' } : { role: 'model' };
}

/** The `usageMetadata` of a turn: scripted, or estimated from the request and the answer (characters / 4). */
function usageOf(turn: GeminiEmulatorTurn, body: Json): Json {
  const estimate = (text: string): number => Math.max(1, Math.ceil(text.length / 4));
  const asked = JSON.stringify([body['systemInstruction'] ?? '', body['contents'] ?? [], body['tools'] ?? []]);
  const produced = (turn.text ?? '') + (turn.functionCalls ?? []).map((c) => c.name + JSON.stringify(c.args)).join('');
  const usage = turn.usage ?? {
    promptTokenCount: estimate(asked),
    candidatesTokenCount: produced === '' ? 0 : estimate(produced),
    ...(turn.thought !== undefined ? { thoughtsTokenCount: estimate(turn.thought) } : {}),
  };
  return {
    promptTokenCount: usage.promptTokenCount,
    candidatesTokenCount: usage.candidatesTokenCount,
    totalTokenCount: usage.promptTokenCount + usage.candidatesTokenCount + (usage.thoughtsTokenCount ?? 0),
    ...(usage.cachedContentTokenCount !== undefined ? { cachedContentTokenCount: usage.cachedContentTokenCount } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.promptTokenCount }],
    ...(usage.thoughtsTokenCount !== undefined ? { thoughtsTokenCount: usage.thoughtsTokenCount } : {}),
  };
}

/** Splits text into small pieces of up to two words each (concatenation gives the text back). */
function splitText(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? [];
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 2) out.push(words.slice(i, i + 2).join(''));
  return out.length > 0 && out.join('') === text ? out : [text];
}

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
