import { AgentRxError } from '../../../core/errors.js';
import type { SseStop } from '../../../core/http/sse-reader.js';
import type { ReadChatStreamOptions } from './chat-stream.js';
import { isMap } from './chat-wire.js';

/** Pieces the model APIs share (see `ModelApi`). */

/** The text of chat content: a string, or the text parts of an array. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isMap(p) && typeof p['text'] === 'string' ? p['text'] : '')).join('');
}

/**
 * The error a stop of a model stream means, `undefined` for a clean end once `ended` (an API whose
 * stream ends with the body). Worded like the chat stream's: a break is transient only before the
 * first chunk (nothing was shown yet); `last` names the event the stream should have ended with.
 */
export function streamStopError(stop: SseStop, opts: ReadChatStreamOptions, chunks: number, last: string, ended = false): AgentRxError | undefined {
  const broken = (why: string): AgentRxError =>
    new AgentRxError('stream_error', `The model stream from ${opts.target} ${why} before ${last} after ${chunks} chunks`, { chunks, transient: chunks === 0 });
  switch (stop.kind) {
    case 'end':
      return ended ? undefined : broken('ended');
    case 'close':
      return broken('was closed');
    case 'error':
      return broken('broke off (connection lost)');
    case 'idle':
      return new AgentRxError('timeout', `The model stream from ${opts.target} was idle for more than ${opts.idleTimeoutMs} ms (after ${chunks} chunks)`, {
        kind: 'idle',
        idleTimeoutMs: opts.idleTimeoutMs,
        chunks,
        transient: false,
      });
    case 'oversized':
      return new AgentRxError(
        'stream_error',
        `The model stream from ${opts.target} sent an SSE frame longer than maxFrameBytes (${stop.maxFrameBytes} bytes) after ${chunks} chunks: check what answers at baseUrl, or raise providers.local.maxFrameBytes`,
        { chunks, maxFrameBytes: stop.maxFrameBytes, transient: false },
      );
    case 'aborted':
      return new AgentRxError('cancelled', 'The model call was cancelled');
  }
}
