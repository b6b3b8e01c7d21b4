import type { AgUiEvent, CustomEvent } from '../events/agui-event.js';
import { TOOL_CALL_ARGS_REPLACED_EVENT } from '../events/agui-streams.js';
import { TURN_END_EVENT } from '../events/operators/to-ag-ui.js';
import type { ToolCallResult } from '../events/tool-call-result.js';
import { hasSource, type ConsumerContext, type ConsumerContextOf, type EventConsumer, type ToolResultSource } from '../plugin/event-consumer.js';

/**
 * Calls `onEvent`, then the consumer contract's typed hook for the event; returns a promise only
 * when a hook went async (the caller bounds and catches it).
 */
export function dispatch(c: EventConsumer, ev: AgUiEvent, ctx: ConsumerContext): void | Promise<void> {
  const first = c.onEvent?.(ev, ctx);
  if (isThenable(first)) return Promise.resolve(first).then(() => typedHook(c, ev, ctx));
  return typedHook(c, ev, ctx);
}

/** True for a promise-like value (a hook that went async). */
export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && 'then' in v && typeof v.then === 'function';
}

/**
 * The contract's typed hook for one AG-UI event. The tool hooks follow the execution, not the
 * wire: TOOL_CALL_END (the arguments are complete) is `onToolArgsEnd`, and a TOOL_CALL_RESULT is
 * `onToolResult` then `onToolEnd` (the execution is over). Hooks that hand over a typed session
 * event are called only when the event came with it (always, for a stream `withAgUi` translated).
 */
function typedHook(c: EventConsumer, ev: AgUiEvent, ctx: ConsumerContext): void | Promise<void> {
  switch (ev.type) {
    case 'RUN_STARTED':
      return c.onRunStarted?.(ev.threadId, ev.runId, ctx);
    case 'TEXT_MESSAGE_START':
      return c.onTextStart?.(ev.messageId, ev.role, ctx);
    case 'TEXT_MESSAGE_CONTENT':
      return c.onTextContent?.(ev.messageId, ev.delta, ctx);
    case 'TEXT_MESSAGE_END':
      return c.onTextEnd?.(ev.messageId, ctx);
    case 'REASONING_MESSAGE_CONTENT':
      return c.onReasoningContent?.(ev.messageId, ev.delta, ctx);
    case 'TOOL_CALL_START':
      return c.onToolStart?.(ev.toolCallId, ev.toolCallName, ctx);
    case 'TOOL_CALL_ARGS':
      return c.onToolArgs?.(ev.toolCallId, ev.delta, ctx);
    case 'TOOL_CALL_END':
      return c.onToolArgsEnd?.(ev.toolCallId, ctx);
    case 'TOOL_CALL_RESULT':
      return isToolResultContext(ctx) ? toolResultHooks(c, ev.toolCallId, ctx) : undefined;
    case 'CUSTOM':
      return customHook(c, ev, ctx);
    case 'STATE_SNAPSHOT':
      return c.onStateSnapshot?.(ev.snapshot, ctx);
    case 'STATE_DELTA':
      return c.onStateDelta?.(ev.delta, ctx);
    case 'RUN_FINISHED':
      return hasSource(ctx, 'agentrx.run_finished') ? c.onRunFinished?.(ev.threadId, ev.runId, ctx) : undefined;
    case 'RUN_ERROR':
      return c.onError?.(ev.message, ev.code, ctx);
    default:
      return;
  }
}

/** The CUSTOM events `toAgUi` produces: a turn's end, and a streamed call's replaced arguments. */
function customHook(c: EventConsumer, ev: CustomEvent, ctx: ConsumerContext): void | Promise<void> {
  if (!hasSource(ctx, 'agentrx.turn_end')) return;
  if (ev.name === TURN_END_EVENT) return c.onTurnEnd?.(ctx.source, ctx);
  if (ev.name !== TOOL_CALL_ARGS_REPLACED_EVENT || c.onToolArgsReplaced === undefined) return;
  // The one AG-UI payload read here: toAgUi alone knows which streamed calls it had to correct.
  const value = ev.value;
  if (typeof value !== 'object' || value === null || !('toolCallId' in value) || !('args' in value)) return;
  const { toolCallId, args } = value;
  if (typeof toolCallId === 'string' && typeof args === 'string') return c.onToolArgsReplaced(toolCallId, args, ctx);
}

function isToolResultContext(ctx: ConsumerContext): ctx is ConsumerContextOf<ToolResultSource> {
  return hasSource(ctx, 'agentrx.tool_result') || hasSource(ctx, 'agentrx.host_tool_result');
}

/** `onToolResult` (its value built only for a consumer that has the hook), then `onToolEnd` once it settled. */
function toolResultHooks(c: EventConsumer, toolCallId: string, ctx: ConsumerContextOf<ToolResultSource>): void | Promise<void> {
  const end = (): void | Promise<void> => c.onToolEnd?.(toolCallId, ctx);
  if (c.onToolResult === undefined) return end();
  const r = c.onToolResult(toolCallId, toolCallResultOf(ctx.source), ctx);
  return isThenable(r) ? Promise.resolve(r).then(end) : end();
}

/**
 * The {@link ToolCallResult} of a typed result event: a fresh object per call (each consumer gets
 * its own copy), its `value` parsed from the text on first read when the tool returned JSON.
 */
export function toolCallResultOf(source: ToolResultSource): ToolCallResult {
  const { content, isError } = source.result;
  if (source.type === 'agentrx.host_tool_result') return { value: content, content, isError, hostRun: true, replayed: false };
  const flags = { content, isError, hostRun: false, replayed: source.replayed };
  if (source.result.json !== true) return { value: content, ...flags };
  let parsed: { readonly value: unknown } | undefined;
  return {
    get value(): unknown {
      parsed ??= { value: parseOr(content) };
      return parsed.value;
    },
    ...flags,
  };
}

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
