import type { CallFragment, WireMap } from './chat-stream.js';
import type { LocalCallIds } from './local-call-ids.js';

/**
 * One fragment of a streamed tool call as a `local.chunk` event carries it (`toolCallDeltas`):
 * what `decode` reports as a `tool_call_delta`. `toolUseId` is the id the turn's end gives the call
 * (the model's id, or `<id>#<turn>.<index>` when the session already used it: `LocalCallIds`);
 * `name` comes with the call's first fragment; `parentMessageId` is the chunk's id (the
 * assistant message's id, as its text deltas carry it).
 */
export interface LocalToolCallDelta {
  readonly toolUseId: string;
  readonly name?: string;
  readonly argsDelta: string;
  readonly parentMessageId?: string;
}

interface CallState {
  /** The model's id of the call, once a fragment carried it. */
  wire: string | undefined;
  /** The ToolUse id the call streams under; undefined: the call does not stream. */
  readonly toolUseId: string | undefined;
}

/**
 * The streamed tool calls of one model call: names each fragment of a `chat.completion.chunk`
 * with the ToolUse id its call will have once the answer is taken into the conversation, so the
 * AG-UI stream opens the call under the id its result will use.
 *
 * That id depends on the call's position in the message and on the model ids of the calls before
 * it, so a call streams only when both are settled at its first fragment: the fragment carries
 * its id and name, and every call with a lower index was already seen with its id (indexes are
 * dense from 0, as servers send them). Any other call (a gap in the indexes, a missing id or
 * name) is not streamed: the turn's end announces it whole, with its right id.
 */
export class LocalStreamCalls {
  private readonly calls = new Map<number, CallState>();

  constructor(private readonly callIds: LocalCallIds) {}

  /** The fragments of one chunk (its `ChunkAccumulator` fragments), with ToolUse ids; undefined when none streams. */
  deltas(chunk: WireMap, fragments: readonly CallFragment[]): LocalToolCallDelta[] | undefined {
    const parentMessageId = typeof chunk['id'] === 'string' && chunk['id'] !== '' ? chunk['id'] : undefined;
    let out: LocalToolCallDelta[] | undefined;
    for (const f of fragments) {
      let call = this.calls.get(f.index);
      let first = false;
      if (call === undefined) {
        call = { wire: f.id, toolUseId: this.streamId(f) };
        this.calls.set(f.index, call);
        first = true;
      } else if (call.wire === undefined) {
        call.wire = f.id;
      }
      if (call.toolUseId === undefined || (!first && f.argsDelta === '')) continue;
      (out ??= []).push({
        toolUseId: call.toolUseId,
        ...(first ? { name: f.name } : {}),
        argsDelta: f.argsDelta,
        ...(parentMessageId !== undefined ? { parentMessageId } : {}),
      });
    }
    return out;
  }

  /** The ToolUse id a call first seen in `f` streams under, or undefined when it cannot be known yet. */
  private streamId(f: CallFragment): string | undefined {
    if (f.id === undefined || f.name === '' || !Number.isInteger(f.index) || f.index < 0) return undefined;
    const wires: string[] = [];
    for (let i = 0; i < f.index; i++) {
      const wire = this.calls.get(i)?.wire;
      if (wire === undefined) return undefined;
      wires.push(wire);
    }
    wires.push(f.id);
    return this.callIds.preview(wires)[f.index];
  }
}
