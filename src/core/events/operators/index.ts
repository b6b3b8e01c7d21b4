export { RecentKeys, dedupeById, type DedupeByIdOptions } from './dedupe-by-id.js';
export { extractHostToolResults, type HostToolResultOf } from './extract-host-tool-results.js';
export { extractTextDeltas, type TextDeltaResult } from './extract-text-deltas.js';
export { groupTurns, type GroupTurnsOptions } from './group-turns.js';
export { toAgUi, type ToAgUiOptions } from './to-ag-ui.js';
