import type { SessionEvent } from '../core/events/session-event.js';
import type { ToolUse } from '../core/model.js';
import type { SessionStore } from '../core/store/session-store.js';
import type { RemoteResult } from './distributed-messages.js';

/** Envelopes read from the log per page. */
const PAGE = 1_000;

/** What the log says of a session's requests. */
export interface LoggedRuns {
  /** The result of each finished request, in order. */
  readonly results: RemoteResult[];
  /** The last request started and neither finished nor failed: a resumed session goes on with it. */
  readonly open: boolean;
}

/**
 * The result of every request that finished in `sessionId`'s log (each `agentrx.run_finished`),
 * in order, rebuilt from the log alone: what a worker that takes a session over publishes for the
 * requests its dead owner finished but did not publish (it died between the log's write and the
 * output stream's). Each turn's text is the text deltas since the previous turn end or run start
 * (so the partial text of a run that was cut off and resumed is not counted twice); tool uses,
 * usage and turns come from the `turn_end` and `run_finished` events, as the live result has them.
 */
export async function loggedResults(store: SessionStore, sessionId: string): Promise<LoggedRuns> {
  const results: RemoteResult[] = [];
  let open = false;
  let texts: string[] = [];
  let current = '';
  let customToolUses: ToolUse[] = [];
  let serverToolUses: ToolUse[] = [];
  const reset = (): void => {
    texts = [];
    current = '';
    customToolUses = [];
    serverToolUses = [];
  };
  const onEnvelope = (env: SessionEvent): void => {
    if (env.source !== 'agentrx') return;
    const raw = env.raw;
    switch (raw.type) {
      case 'agentrx.run_started':
        reset();
        open = true;
        return;
      case 'agentrx.text_delta':
        current += raw.text;
        return;
      case 'agentrx.turn_end':
        texts.push(current);
        current = '';
        customToolUses.push(...raw.customToolUses);
        serverToolUses.push(...raw.serverToolUses);
        return;
      case 'agentrx.run_finished':
        results.push({
          terminal: raw.terminal,
          stopReason: raw.stopReason,
          text: texts[texts.length - 1] ?? '',
          texts,
          customToolUses,
          serverToolUses,
          sessionId,
          provider: env.provider,
          turns: raw.turns,
          usage: raw.usage,
          ...(raw.output !== undefined ? { output: raw.output } : {}),
        });
        reset();
        open = false;
        return;
      case 'agentrx.run_error':
        open = false;
        return;
      default:
        return;
    }
  };
  for (let after = 0; ;) {
    const page = await store.read(sessionId, after, PAGE);
    for (const env of page) onEnvelope(env);
    if (page.length < PAGE) return { results, open };
    after = page[page.length - 1]!.seq;
  }
}
