import { jsonText } from '../../../core/util/json-depth.js';
import type { ChatCompletionResult } from './chat-completion.js';
import { isMap, type WireMap } from './chat-wire.js';

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
