import { eventFrame } from './frames.js';
import type { HarnessWireMessage } from './history.js';
import type { AgentCoreScriptedTurn } from './script.js';

/**
 * A scripted turn of the AgentCore emulator as what goes on the wire: the event-stream frames of
 * one `InvokeHarness` answer (`messageStart`, text deltas, tool-use blocks with their input split
 * across `contentBlockDelta` frames, `messageStop`, `metadata`), and what a completed invoke
 * commits to the session's history.
 */

/** One scripted turn, encoded. */
export interface BuiltTurn {
  readonly frames: Uint8Array[];
  readonly stopReason: string;
  readonly toolUses: readonly { toolUseId: string; name: string; input: string }[];
  /** The assistant message content as committed to history. */
  readonly content: Record<string, unknown>[];
}

/**
 * Encodes `turn` as the answer to invoke number `invoke` (default tool-use ids
 * `tooluse_e<invoke>_<i>`); the invoke's `messages` only feed the default usage estimate.
 */
export function buildTurn(turn: AgentCoreScriptedTurn, invoke: number, messages: readonly HarnessWireMessage[]): BuiltTurn {
  const frames: Uint8Array[] = [];
  const ev = (type: string, payload: unknown): void => {
    frames.push(eventFrame(type, payload));
  };
  const deltas = typeof turn.text === 'string' ? splitText(turn.text) : [...(turn.text ?? [])];
  const text = deltas.join('');
  const uses = (turn.toolUses ?? []).map((u, i) => ({
    toolUseId: u.id ?? `tooluse_e${invoke}_${i}`,
    name: u.name,
    type: u.type ?? 'tool_use',
    input: typeof u.input === 'string' ? u.input : JSON.stringify(u.input),
    pieces: Math.max(1, u.pieces ?? 3),
  }));
  ev('messageStart', { role: 'assistant' });
  let index = 0;
  if (deltas.length > 0) {
    for (const d of deltas) ev('contentBlockDelta', { contentBlockIndex: 0, delta: { text: d } });
    ev('contentBlockStop', { contentBlockIndex: 0 });
    index = 1;
  }
  const indexOf = (i: number): number => (turn.reuseIndex ? index : index + i);
  const start = (u: (typeof uses)[number], i: number): void =>
    ev('contentBlockStart', { contentBlockIndex: indexOf(i), start: { toolUse: { toolUseId: u.toolUseId, name: u.name, type: u.type } } });
  const pieces = uses.map((u) => splitInput(u.input, u.pieces));
  if (turn.interleave && !turn.reuseIndex) {
    uses.forEach(start);
    const longest = Math.max(0, ...pieces.map((p) => p.length));
    for (let k = 0; k < longest; k++) {
      uses.forEach((_u, i) => {
        const p = pieces[i]![k];
        if (p !== undefined) ev('contentBlockDelta', { contentBlockIndex: indexOf(i), delta: { toolUse: { input: p } } });
      });
    }
    uses.forEach((_u, i) => ev('contentBlockStop', { contentBlockIndex: indexOf(i) }));
  } else {
    uses.forEach((u, i) => {
      start(u, i);
      for (const p of pieces[i]!) ev('contentBlockDelta', { contentBlockIndex: indexOf(i), delta: { toolUse: { input: p } } });
      ev('contentBlockStop', { contentBlockIndex: indexOf(i) });
    });
  }
  const stopReason = turn.stopReason ?? (uses.some((u) => u.type === 'tool_use') ? 'tool_use' : 'end_turn');
  ev('messageStop', { stopReason });
  const usage = turn.usage ?? {
    inputTokens: Math.max(1, Math.ceil(JSON.stringify(messages).length / 4)),
    outputTokens: Math.max(1, Math.ceil((text + uses.map((u) => u.name + u.input).join('')).length / 4)),
  };
  ev('metadata', { usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens }, metrics: { latencyMs: 1 } });
  const content: Record<string, unknown>[] = [];
  if (text !== '') content.push({ text });
  for (const u of uses) content.push({ toolUse: { toolUseId: u.toolUseId, name: u.name, input: safeParse(u.input) } });
  return { frames, stopReason, toolUses: uses.filter((u) => u.type === 'tool_use'), content };
}

/** Splits text into deltas of up to two words (concatenation gives the text back). */
function splitText(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? (text === '' ? [] : [text]);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 2) out.push(words.slice(i, i + 2).join(''));
  return out.join('') === text ? out : text === '' ? [] : [text];
}

/** Splits a JSON string into `n` fragments (never empty ones). */
function splitInput(input: string, n: number): string[] {
  if (input === '') return [];
  const size = Math.ceil(input.length / Math.min(n, input.length));
  const out: string[] = [];
  for (let i = 0; i < input.length; i += size) out.push(input.slice(i, i + size));
  return out;
}

function safeParse(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return {};
  }
}
