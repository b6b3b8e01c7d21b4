import type { RawEvent } from '../../../core/model.js';
import { CmaEventType, idOf, isMap, typeOf } from './cma-wire.js';

/**
 * Unfinished previews one session remembers by default. The service concludes a session's
 * previews in order (each `agent.message` right after its deltas), so a session has one, or a
 * few, open at a time; more pile up only when previews are never concluded (a message cut short
 * by an interrupt). The bound caps what such a stream can hold; forgetting the oldest costs at
 * most that message's text being reported again in full if it is concluded after all.
 */
export const MAX_TRACKED_PREVIEWS = 64;

/**
 * Normalized text deltas of one Claude Managed Agents session. Without previews, each
 * `agent.message` yields its whole text once. With `event_deltas` previews (`event_delta` events
 * whose `delta.content` is a text fragment), fragments are reported as they arrive and the
 * buffered `agent.message` that concludes the preview yields only what the fragments did not
 * already cover — never the same text twice. One instance per session (it lives in the conn):
 * sessions never share or evict each other's previews. Keyed by message id; at most `maxTracked`
 * unfinished previews are remembered (the oldest is forgotten first).
 */
export class CmaTextDeltas {
  private readonly previews = new Map<string, Map<number, string>>();

  /** @param maxTracked Unfinished previews remembered at most (oldest forgotten first). */
  constructor(private readonly maxTracked = MAX_TRACKED_PREVIEWS) {}

  /** Unfinished previews currently remembered. */
  get tracked(): number {
    return this.previews.size;
  }

  /** Forgets every unfinished preview (the session ended). */
  clear(): void {
    this.previews.clear();
  }

  /** The text chunk `event` contributes, or undefined. Never throws on odd input. */
  delta(event: RawEvent): { readonly text: string; readonly messageId: string } | undefined {
    const type = typeOf(event);
    if (type === CmaEventType.eventDelta) return this.fragment(event);
    return type === CmaEventType.agentMessage ? this.message(event) : undefined;
  }

  /** The text an `agent.message` adds to what its previews already reported, or undefined. */
  message(event: RawEvent): { readonly text: string; readonly messageId: string } | undefined {
    const id = idOf(event);
    const streamed = id !== undefined ? this.previews.get(id) : undefined;
    if (id !== undefined) this.previews.delete(id);
    let text = '';
    let emittedAny = streamed !== undefined && streamed.size > 0;
    for (const block of textBlocks(event)) {
      const seen = streamed?.get(block.index);
      if (seen === undefined) {
        text += (emittedAny ? '\n' : '') + block.text;
        emittedAny = true;
      } else if (block.text.startsWith(seen)) {
        text += block.text.slice(seen.length);
      }
      // A preview that diverged from the final block is left as it was: no text is repeated.
    }
    if (text === '') return undefined;
    return { text, messageId: id ?? 'agent.message' };
  }

  /** The text of an `event_delta` preview fragment (remembered for its `agent.message`), or undefined. */
  fragment(event: RawEvent): { readonly text: string; readonly messageId: string } | undefined {
    const id = event['event_id'];
    const delta = event['delta'];
    if (typeof id !== 'string' || !isMap(delta) || !isMap(delta['content'])) return undefined;
    const content = delta['content'];
    if (content['type'] !== 'text' || typeof content['text'] !== 'string' || content['text'] === '') return undefined;
    const index = typeof delta['index'] === 'number' && Number.isInteger(delta['index']) && delta['index'] >= 0 ? delta['index'] : 0;
    let blocks = this.previews.get(id);
    if (!blocks) {
      if (this.previews.size >= this.maxTracked) this.previews.delete(this.previews.keys().next().value as string);
      blocks = new Map();
      this.previews.set(id, blocks);
    }
    const before = blocks.get(index);
    const sep = before === undefined && blocks.size > 0 ? '\n' : '';
    blocks.set(index, (before ?? '') + content['text']);
    return { text: sep + content['text'], messageId: id };
  }
}

/** The `text` blocks of an `agent.message`, with their index among its content blocks. */
export function textBlocks(event: RawEvent): { index: number; text: string }[] {
  const content = event['content'];
  if (!Array.isArray(content)) return [];
  const out: { index: number; text: string }[] = [];
  content.forEach((b: unknown, index) => {
    if (isMap(b) && b['type'] === 'text' && typeof b['text'] === 'string') out.push({ index, text: b['text'] });
  });
  return out;
}
