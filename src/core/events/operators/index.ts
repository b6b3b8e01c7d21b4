export { RecentKeys, dedupeById, type DedupeByIdOptions } from './dedupe-by-id.js';
export { extractHostToolResults, type HostToolResultOf } from './extract-host-tool-results.js';
export { extractReasoningDeltas } from './extract-reasoning-deltas.js';
export { extractTextDeltas, type TextDeltaResult } from './extract-text-deltas.js';
export { extractToolCallDeltas, type ToolCallDeltaOf, type ToolCallDeltaPart } from './extract-tool-call-deltas.js';
export { groupTurns, type GroupTurnsOptions } from './group-turns.js';
export { TOOL_CALL_ARGS_REPLACED_EVENT, toAgUi, type ToAgUiOptions } from './to-ag-ui.js';
