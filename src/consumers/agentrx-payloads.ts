import type { AgUiEvent, CustomEvent, RunFinishedEvent, ToolCallResultEvent } from '../core/events/agui-event.js';
import { TOOL_CALL_ARGS_REPLACED_EVENT, TURN_END_EVENT } from '../core/events/operators/to-ag-ui.js';
import type { HostToolResultEvent, ToolResultEvent } from '../core/events/session-event.js';
import type { Usage } from '../core/model.js';

/**
 * Typed readers for what `toAgUi` carries from agentrx's own events into AG-UI fields that the
 * AG-UI types leave open (`rawEvent`, `result`, `snapshot`). Each reader checks the shape at
 * run time, since the AG-UI event may come from anywhere (a replay, another producer), and
 * returns only the fields that are well-formed.
 */

/** `RUN_FINISHED.result` as `toAgUi` builds it from `agentrx.run_finished`. */
export interface RunOutcome {
  /** The run's last turn terminal (`end_turn`, `terminated`, …). */
  readonly terminal?: string;
  /** The host's raw stop reason. */
  readonly stopReason?: unknown;
  readonly turns?: number;
  /** Summed over the run; present only when both counts are finite and non-negative. */
  readonly usage?: Usage;
}

/** The `value` of the CUSTOM `agentrx.turn_end` event `toAgUi` builds from `agentrx.turn_end`. */
export interface TurnSnapshot {
  /** 1-based turn number within the request; present only when a positive integer. */
  readonly turn?: number;
  readonly terminal?: string;
  readonly stopReason?: unknown;
  /** The turn's usage; present only when both counts are finite and non-negative. */
  readonly usage?: Usage;
}

/** The well-formed fields of a RUN_FINISHED `result`. */
export function runOutcomeOf(ev: RunFinishedEvent): RunOutcome {
  const r = isRecord(ev.result) ? ev.result : {};
  const usage = usageOf(r['usage']);
  return {
    ...(typeof r['terminal'] === 'string' ? { terminal: r['terminal'] } : {}),
    ...(r['stopReason'] !== undefined ? { stopReason: r['stopReason'] } : {}),
    ...(typeof r['turns'] === 'number' ? { turns: r['turns'] } : {}),
    ...(usage ? { usage } : {}),
  };
}

/** True for the CUSTOM event that closes a turn (`agentrx.turn_end`). */
export function isTurnEndEvent(ev: AgUiEvent): ev is CustomEvent {
  return ev.type === 'CUSTOM' && ev.name === TURN_END_EVENT;
}

/** The well-formed fields of a turn's end (the CUSTOM `agentrx.turn_end` event's `value`). */
export function turnSnapshotOf(ev: CustomEvent): TurnSnapshot {
  const s = isRecord(ev.value) ? ev.value : {};
  const turn = s['turn'];
  const usage = usageOf(s['usage']);
  return {
    ...(typeof turn === 'number' && Number.isInteger(turn) && turn > 0 ? { turn } : {}),
    ...(typeof s['terminal'] === 'string' ? { terminal: s['terminal'] } : {}),
    ...(s['stopReason'] !== undefined ? { stopReason: s['stopReason'] } : {}),
    ...(usage ? { usage } : {}),
  };
}

/**
 * The verbatim `agentrx.tool_result` riding in a TOOL_CALL_RESULT's `rawEvent` (AG-UI has no
 * field for `isError`, `replayed` or `durationMs`), or undefined when the event carries none or
 * something of another shape.
 */
export function toolResultOf(ev: ToolCallResultEvent): ToolResultEvent | undefined {
  return isToolResultEvent(ev.rawEvent) ? ev.rawEvent : undefined;
}

/** True when `v` has the shape of an `agentrx.tool_result` event. */
export function isToolResultEvent(v: unknown): v is ToolResultEvent {
  if (!isRecord(v) || v['type'] !== 'agentrx.tool_result') return false;
  const { toolUse, result, replayed, durationMs } = v;
  return (
    isRecord(toolUse) &&
    typeof toolUse['id'] === 'string' &&
    typeof toolUse['name'] === 'string' &&
    isRecord(toolUse['input']) &&
    isRecord(result) &&
    typeof result['toolUseId'] === 'string' &&
    typeof result['content'] === 'string' &&
    typeof result['isError'] === 'boolean' &&
    typeof replayed === 'boolean' &&
    typeof durationMs === 'number'
  );
}

/**
 * The verbatim `agentrx.host_tool_result` riding in the TOOL_CALL_RESULT of a tool the host ran
 * itself (its `isError`), or undefined when the event carries none or something of another shape.
 */
export function hostToolResultOf(ev: ToolCallResultEvent): HostToolResultEvent | undefined {
  return isHostToolResultEvent(ev.rawEvent) ? ev.rawEvent : undefined;
}

/** True when `v` has the shape of an `agentrx.host_tool_result` event. */
export function isHostToolResultEvent(v: unknown): v is HostToolResultEvent {
  if (!isRecord(v) || v['type'] !== 'agentrx.host_tool_result') return false;
  const { toolUse, result } = v;
  return (
    isRecord(toolUse) &&
    typeof toolUse['id'] === 'string' &&
    (toolUse['name'] === undefined || typeof toolUse['name'] === 'string') &&
    isRecord(result) &&
    typeof result['content'] === 'string' &&
    typeof result['isError'] === 'boolean'
  );
}

/**
 * The CUSTOM event `toAgUi` sends after a streamed call's TOOL_CALL_END when the input the tool
 * runs with is not what its TOOL_CALL_ARGS fragments spelled out: `args` (JSON text) replaces them.
 */
export interface ToolCallArgsReplaced {
  readonly toolCallId: string;
  readonly args: string;
}

/** The well-formed `{ toolCallId, args }` of a CUSTOM `agentrx.tool_call_args_replaced` event, else undefined. */
export function toolCallArgsReplacedOf(ev: AgUiEvent): ToolCallArgsReplaced | undefined {
  if (ev.type !== 'CUSTOM' || ev.name !== TOOL_CALL_ARGS_REPLACED_EVENT || !isRecord(ev.value)) return undefined;
  const { toolCallId, args } = ev.value;
  return typeof toolCallId === 'string' && typeof args === 'string' ? { toolCallId, args } : undefined;
}

/** `{ inputTokens, outputTokens }` when both are finite non-negative numbers. */
function usageOf(v: unknown): Usage | undefined {
  if (!isRecord(v)) return undefined;
  const { inputTokens, outputTokens } = v;
  if (!isCount(inputTokens) || !isCount(outputTokens)) return undefined;
  return { inputTokens, outputTokens };
}

/** A finite, non-negative number. */
export function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

function isRecord(v: unknown): v is Readonly<Record<string, unknown>> {
  return typeof v === 'object' && v !== null;
}
