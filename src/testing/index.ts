export { startOpenAiEmulator } from './openai-emulator.js';
export type {
  EmulatorFault,
  EmulatorQuirks,
  EmulatorToolCall,
  EmulatorTurn,
  FaultPlan,
  OpenAiEmulator,
  OpenAiEmulatorOptions,
  RecordedRequest,
} from './openai-emulator.js';
export { startAnthropicEmulator } from './anthropic-emulator.js';
export type {
  AnthropicEmulator,
  AnthropicEmulatorFault,
  AnthropicEmulatorOptions,
  AnthropicEmulatorToolUse,
  AnthropicEmulatorTurn,
  AnthropicEmulatorUsage,
  AnthropicRecordedRequest,
} from './anthropic-emulator.js';
export { startGeminiEmulator } from './gemini-emulator.js';
export type {
  GeminiEmulator,
  GeminiEmulatorFault,
  GeminiEmulatorFunctionCall,
  GeminiEmulatorOptions,
  GeminiEmulatorTurn,
  GeminiEmulatorUsage,
  GeminiRecordedRequest,
} from './gemini-emulator.js';
export { startResponsesEmulator } from './responses-emulator.js';
export type {
  ResponsesEmulator,
  ResponsesEmulatorFault,
  ResponsesEmulatorFunctionCall,
  ResponsesEmulatorOptions,
  ResponsesEmulatorTurn,
  ResponsesEmulatorUsage,
  ResponsesRecordedRequest,
} from './responses-emulator.js';
export { DEMO_MODEL_LABEL, demoModelTurn } from './demo-model.js';
export type { DemoModelRequest } from './demo-model.js';
export {
  ScriptedProvider,
  ev,
  type ScriptedConn,
  type ScriptedEvent,
  type ScriptedInput,
  type ScriptedProviderOptions,
  type ScriptedTurn,
} from './scripted-provider.js';
export { RecordingConsumer } from './recording-consumer.js';
export { startAgentCoreEmulator } from './agentcore-emulator.js';
export type {
  AgentCoreEmulator,
  AgentCoreEmulatorOptions,
  AgentCoreFault,
  AgentCoreFaultPlan,
  AgentCoreOperation,
  AgentCoreRecordedRequest,
  AgentCoreScriptedToolUse,
  AgentCoreScriptedTurn,
  AgentCoreTurnContext,
} from './agentcore-emulator.js';
export type { AgentCoreControlOptions, EmulatedHarness, EmulatedHarnessStatus, EmulatorHttpFault, SeededHarness } from './agentcore-emulator/control-plane.js';
export type { HarnessWireMessage } from './agentcore-emulator/history.js';
export type { SigV4Check } from './agentcore-emulator/sigv4.js';
export { startCmaEmulator } from './cma-emulator.js';
export type {
  CmaEmulator,
  CmaEmulatorOptions,
  CmaEmulatorSession,
  CmaFaultPlan,
  CmaFilesFaultPlan,
  CmaFilesSlowFault,
  CmaFilesStatusFault,
  CmaGetFault,
  CmaPostFault,
  CmaRecordedRequest,
  CmaScriptServerToolUse,
  CmaScriptToolUse,
  CmaScriptTurn,
  CmaWireEvent,
} from './cma-emulator.js';
export { ReplayProvider, type ReplayConn, type ReplayInput, type ReplayMismatch, type ReplayProviderOptions } from './replay-provider.js';
export { exportCassette, formatCassette, parseCassette, readCassette, readWholeLog, writeCassette, type Cassette } from '../core/store/cassette.js';
