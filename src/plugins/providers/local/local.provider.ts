import { randomUUID } from 'node:crypto';
import { Observable } from '../../../core/util/rxjs.js';
import { inject, injectable } from '../../../core/util/inversify.js';
import { AgentRxError, toAgentRxError } from '../../../core/errors.js';
import { HttpClientFactory } from '../../../core/http/http-client-factory.js';
import { Logger } from '../../../core/logger.js';
import type { KickoffOptions, OpenOptions, TurnProvider } from '../../../core/plugin/agent-provider.js';
import type { HostEvent } from '../../../core/plugin/host-event.js';
import type { RawEvent, RunSetting, RunSettings, ToolResult, ToolUse, TurnResult } from '../../../core/model.js';
import { isMap, type CallFragment, type WireMap } from './chat-stream.js';
import { LocalCallIds } from './local-call-ids.js';
import { acceptResponse, stageTurn, unansweredCalls, type LocalConn, type LocalInput, type StagedTurn } from './local-conversation.js';
import { LocalModelClient } from './local-model-client.js';
import { priorWireMessages } from './local-prior.js';
import { decodeLocalEvent, normalizeLocalTurn } from './local-normalize.js';
import { LocalStreamCalls } from './local-stream-calls.js';
import { LocalProviderOptions } from './local.config.js';

export type { LocalConn, LocalInput, LocalRawEvent } from './local-conversation.js';

/**
 * The `local` provider: an in-process agent loop over any OpenAI-compatible
 * `/v1/chat/completions` endpoint (Ollama, vLLM, llama.cpp server, OpenAI, gateways). One model
 * call per turn; the client holds the whole history (`transcript`).
 *
 * The parts: the conversation and its loop guards (`local-conversation.ts`), the model call with
 * its retries (`LocalModelClient`: a call is retried only on a transient failure, and a stream
 * only before its first chunk was emitted, so already-emitted text is never repeated), and the
 * fold of a turn's events (`local-normalize.ts`). One instance serves every session: all
 * per-session state (the history, the guards' memory, in-flight calls) lives in the `LocalConn`.
 */
@injectable()
export class LocalAgentProvider implements TurnProvider<LocalConn, LocalInput> {
  readonly id = 'local';
  /** One model call per turn. */
  readonly mode = 'request_response' as const;
  /** A client's earlier conversation becomes real chat history (`priorMessages`). */
  readonly acceptsPriorMessages = true;
  readonly toolsPerCall = true;
  readonly supportsOutcomes = false;
  /** Every setting goes with each model call. */
  readonly runSettings: readonly RunSetting[] = ['model', 'instructions', 'temperature', 'topP', 'maxOutputTokens'];
  /** `response_format: { type: 'json_schema' }`. */
  readonly nativeOutputSchema = true;

  private readonly model: LocalModelClient;

  constructor(
    @inject(LocalProviderOptions) private readonly options: LocalProviderOptions,
    @inject(HttpClientFactory) httpClientFactory: HttpClientFactory,
    @inject(Logger) logger: Logger,
  ) {
    this.model = new LocalModelClient(options, httpClientFactory, logger);
  }

  /** Builds the conn: fresh (system prompt from the spec) or restored from `opts.history` (a resume). */
  async open(opts: OpenOptions): Promise<LocalConn> {
    if (opts.signal.aborted) throw new AgentRxError('cancelled', 'The session was cancelled before it opened');
    const restored = (opts.history ?? []).filter(isMap).map((m) => ({ ...m }));
    const settings = opts.settings ?? {};
    const system = settings.instructions ?? opts.spec.systemPrompt;
    // A fresh session starts from the system prompt, then the conversation a client carried over.
    const history: WireMap[] =
      restored.length > 0
        ? withInstructions(restored, settings.instructions)
        : [...(system ? [{ role: 'system', content: system }] : []), ...priorWireMessages(opts.priorMessages ?? [])];
    return {
      sessionId: opts.sessionId ?? `local-${randomUUID()}`,
      resumed: restored.length > 0,
      model: settings.model ?? opts.spec.model ?? this.options.model,
      callFields: callFieldsOf(settings),
      tools: wireTools(opts.spec),
      spec: opts.spec,
      signal: opts.signal,
      history,
      polls: 0,
      seen: new Set(),
      errorCounts: new Map(),
      callIds: LocalCallIds.fromHistory(history),
      inflight: new Set(),
      closed: false,
      maxTurns: this.options.maxTurns ?? opts.maxTurns,
    };
  }

  sessionId(conn: LocalConn): string {
    return conn.sessionId;
  }

  resumed(conn: LocalConn): boolean {
    return conn.resumed;
  }

  kickoffInput(opts: KickoffOptions): LocalInput {
    return { kind: 'messages', messages: [{ role: 'user', content: opts.prompt ?? 'Begin.' }] };
  }

  userInput(text: string): LocalInput {
    return { kind: 'messages', messages: [{ role: 'user', content: text }] };
  }

  resumeInput(toolUses: readonly ToolUse[], results: readonly ToolResult[]): LocalInput {
    return { kind: 'resume', toolUses: [...toolUses], results: [...results] };
  }

  /**
   * Runs one turn. Cold: each subscription applies `input` to a staged copy of the conn state,
   * emits any `local.directive` events, calls the model (streaming: one `local.chunk` per chunk as
   * it arrives), then emits `local.duplicate_tool_call` events and one `local.model_response`, and
   * completes. The staged state is committed only on success, so a failed poll leaves the conn as
   * it was. Unsubscribing aborts the HTTP request; the session signal aborting errors with
   * `cancelled`.
   */
  pollTurn(conn: LocalConn, input: LocalInput): Observable<RawEvent> {
    return new Observable<RawEvent>((subscriber) => {
      if (conn.closed) {
        subscriber.error(new AgentRxError('session_closed', 'The local session is closed'));
        return undefined;
      }
      const controller = new AbortController();
      const onSessionAbort = (): void => controller.abort(conn.signal.reason);
      conn.signal.addEventListener('abort', onSessionAbort, { once: true });
      if (conn.signal.aborted) controller.abort(conn.signal.reason);
      conn.inflight.add(controller);
      let finished = false;
      const release = (): void => {
        conn.signal.removeEventListener('abort', onSessionAbort);
        conn.inflight.delete(controller);
      };

      let staged: StagedTurn;
      try {
        staged = stageTurn(conn, input);
      } catch (e) {
        release();
        subscriber.error(toAgentRxError(e, 'invalid_options'));
        return undefined;
      }
      for (const ev of staged.directives) subscriber.next(ev);

      // Tool-call fragments are named with the ToolUse ids the answer's calls will get.
      const streamCalls = new LocalStreamCalls(conn.callIds);
      const onChunk = (chunk: WireMap, fragments: readonly CallFragment[]): void => {
        const toolCallDeltas = fragments.length > 0 ? streamCalls.deltas(chunk, fragments) : undefined;
        subscriber.next(toolCallDeltas ? { type: 'local.chunk', chunk, toolCallDeltas } : { type: 'local.chunk', chunk });
      };
      this.model
        .call(conn.model, (conn.tools = wireTools(conn.spec)), staged.history, controller.signal, onChunk, conn.callFields)
        .then((result) => {
          if (subscriber.closed) return;
          const events = acceptResponse(conn, staged, result);
          finished = true;
          release();
          for (const ev of events) subscriber.next(ev);
          subscriber.complete();
        })
        .catch((e: unknown) => {
          finished = true;
          release();
          if (!subscriber.closed) subscriber.error(toAgentRxError(e));
        });

      return () => {
        release();
        if (!finished) controller.abort(new AgentRxError('cancelled', 'The turn was unsubscribed'));
      };
    });
  }

  /** See `normalizeLocalTurn`. Pure. */
  normalize(events: readonly RawEvent[]): TurnResult {
    return normalizeLocalTurn(events);
  }

  /** What a Local event says (see `decodeLocalEvent`). Needs nothing of the conn: the event says how it came. */
  decode(_conn: LocalConn, event: RawEvent): readonly HostEvent[] {
    return decodeLocalEvent(event);
  }

  /** Local events are synthesized per poll and never replayed: nothing to dedupe by id. */
  eventId(_event: RawEvent): string | undefined {
    return undefined;
  }

  /** A copy of the conversation history, verbatim wire messages. */
  transcript(conn: LocalConn): readonly RawEvent[] {
    return conn.history.map((m) => ({ ...m }));
  }

  /** Tool calls of the restored history's last assistant message that no tool message answers yet. */
  unansweredToolUses(conn: LocalConn): readonly ToolUse[] {
    return conn.resumed ? unansweredCalls(conn.history) : [];
  }

  /** Aborts in-flight model calls; later polls fail with `session_closed`. */
  close(conn: LocalConn): void {
    conn.closed = true;
    for (const c of conn.inflight) c.abort(new AgentRxError('session_closed', 'The local session was closed'));
    conn.inflight.clear();
  }
}

/** The spec's tools (read now: a ToolSource may have changed them) in OpenAI function format. */
function wireTools(spec: OpenOptions['spec']): WireMap[] {
  return spec.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description ?? '', parameters: t.inputSchema ?? { type: 'object' } },
  }));
}

/** A resumed conversation with the session's own system prompt in place of the stored one (or first, when it had none). */
function withInstructions(history: WireMap[], instructions: string | undefined): WireMap[] {
  if (instructions === undefined) return history;
  const system = { role: 'system', content: instructions };
  return history[0]?.['role'] === 'system' ? [system, ...history.slice(1)] : [system, ...history];
}

/** The chat-completions fields of the session's settings: sampling, and the output schema as `response_format`. */
function callFieldsOf(s: RunSettings): WireMap {
  return {
    ...(s.temperature !== undefined ? { temperature: s.temperature } : {}),
    ...(s.topP !== undefined ? { top_p: s.topP } : {}),
    ...(s.maxOutputTokens !== undefined ? { max_tokens: s.maxOutputTokens } : {}),
    ...(s.outputSchema !== undefined
      ? { response_format: { type: 'json_schema', json_schema: { name: 'output', schema: s.outputSchema, strict: false } } }
      : {}),
  };
}
