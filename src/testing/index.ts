export { startOpenAiEmulator } from './openai-emulator.js';
export type { EmulatorFault, EmulatorQuirks, EmulatorToolCall, EmulatorTurn, FaultPlan, OpenAiEmulator, OpenAiEmulatorOptions, RecordedRequest } from './openai-emulator.js';
export { DEMO_MODEL_LABEL, demoModelTurn } from './demo-model.js';
export type { DemoModelRequest } from './demo-model.js';
export { ScriptedProvider, ev, type ScriptedEvent, type ScriptedProviderOptions, type ScriptedTurn } from './scripted-provider.js';
export { RecordingConsumer } from './recording-consumer.js';
