export { RecentKeys, dedupeById, type DedupeByIdOptions } from './dedupe-by-id.js';
export { extractHostToolResults, hostToolResultEvent, type HostToolResultOf } from './extract-host-tool-results.js';
export { extractReasoningDeltas, reasoningDeltaEvent } from './extract-reasoning-deltas.js';
export { extractTextDeltas, textDeltaEvent, type TextDeltaResult } from './extract-text-deltas.js';
export { extractToolCallDeltas, toolCallDeltaEvents, type ToolCallDeltaOf, type ToolCallDeltaPart } from './extract-tool-call-deltas.js';
export { groupTurns, type GroupTurnsOptions } from './group-turns.js';
export { TOOL_CALL_ARGS_REPLACED_EVENT, toAgUi, type ToAgUiOptions } from './to-ag-ui.js';
