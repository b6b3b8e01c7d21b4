/** Public surface of `agentrx`. */
export { AgentRx, type AgentRxConfigInput, type AgentRxCreateOptions } from './agentrx.js';
export { Session } from './core/session/session.js';
export type { LogAttachment, SequencedAgUiEvent } from './core/session/log-attachment.js';
export { InProcessPlacement } from './core/session/in-process-placement.js';
export type { ConfirmTool, OutputSchema, SessionOptions, ToolDecision, TurnGuard } from './core/session/session-options.js';
export { AgentRxError, isAgentRxError, type ErrorCode } from './core/errors.js';
export type {
  AgentSpec,
  Outcome,
  RawEvent,
  RunSetting,
  RunSettings,
  SessionResult,
  ToolConfirmation,
  ToolDeclaration,
  ToolResult,
  ToolUse,
  TurnResult,
  TurnTerminal,
  Usage,
} from './core/model.js';
export {
  AgentProvider,
  defaultEventId,
  missedSince,
  type IngestCursor,
  type KickoffOptions,
  type OpenOptions,
  type ProviderBase,
  type ProviderMode,
  type Reconnected,
  type StreamingProvider,
  type StreamItem,
  type TurnProvider,
} from './core/plugin/agent-provider.js';
export {
  NO_HOST_EVENTS,
  toolConfirmationOf,
  type HostEvent,
  type HostReasoning,
  type HostText,
  type HostToolAnswered,
  type HostToolCallDelta,
  type HostToolResult,
  type HostToolUse,
  type HostTurnEnd,
} from './core/plugin/host-event.js';
export {
  ToolHandler,
  type InputType,
  type JsonSchema,
  type StandardSchemaIssue,
  type StandardSchemaResult,
  type StandardSchemaV1,
  type ToolContext,
  type ToolInputSchema,
  type ToolOutcome,
  type ToolOutput,
} from './core/plugin/tool-handler.js';
export { ToolSource, type ToolSourceSubscription } from './core/plugin/tool-source.js';
export { defineTool, type ToolDefinition } from './core/tools/define-tool.js';
export {
  BaseEventConsumer,
  EventConsumer,
  hasSource,
  type ConsumerContext,
  type ConsumerContextOf,
  type StartContext,
  type StopContext,
  type StopReason,
  type ToolCallResult,
  type ToolResultSource,
} from './core/plugin/event-consumer.js';
export type { LiveResult, LiveSession } from './core/plugin/live-session.js';
export {
  SessionFactoryToken,
  SessionPlacementToken,
  type LogReader,
  type PlacementHealth,
  type SessionFactory,
  type SessionPlacement,
} from './core/plugin/session-placement.js';
export type { LifecycleParticipant } from './core/plugin/lifecycle-participant.js';
export { AgUiEventType } from './core/events/agui-event.js';
export type {
  AgUiEvent,
  CustomEvent,
  RawAgUiEvent,
  ReasoningEndEvent,
  ReasoningMessageContentEvent,
  ReasoningMessageEndEvent,
  ReasoningMessageStartEvent,
  ReasoningStartEvent,
  RunErrorEvent,
  RunFinishedEvent,
  RunStartedEvent,
  StateSnapshotEvent,
  StateDeltaEvent,
  StepFinishedEvent,
  StepStartedEvent,
  TextMessageContentEvent,
  TextMessageEndEvent,
  TextMessageStartEvent,
  ToolCallArgsEvent,
  ToolCallEndEvent,
  ToolCallResultEvent,
  ToolCallStartEvent,
} from './core/events/agui-event.js';
export { isAgentRxEvent } from './core/events/session-event.js';
export type {
  AgentRxEnvelope,
  AgentRxEvent,
  AgentRxEventOf,
  AgentRxEventType,
  ConfirmationRequired,
  Diagnostic,
  EventDraft,
  HostToolResultEvent,
  ProviderEnvelope,
  ReasoningDelta,
  ReconnectedEvent,
  Reconnecting,
  Reprompt,
  RunError,
  RunFinished,
  RunStarted,
  SessionEvent,
  TextDelta,
  ToolCallDelta,
  ToolConfirmationEvent,
  ToolResultEvent,
  ToolStarted,
  TurnEnd,
} from './core/events/session-event.js';
export {
  dedupeById,
  extractReasoningDeltas,
  extractTextDeltas,
  extractToolCallDeltas,
  groupTurns,
  toAgUi,
  type DedupeByIdOptions,
  type GroupTurnsOptions,
  type TextDeltaResult,
  type ToAgUiOptions,
  type ToolCallDeltaOf,
  type ToolCallDeltaPart,
} from './core/events/operators/index.js';
export type { ConsumerError } from './core/session/consumer-hub.js';
export { Logger, MemoryLogger, StderrLogger, type LogLevel } from './core/logger.js';
export { SessionStore, type SessionRecord, type SessionStatus, type StoreLease } from './core/store/session-store.js';
export { MemorySessionStore } from './core/store/memory/memory-session-store.js';
export { FileSessionStore, type FileSessionStoreOptions } from './core/store/file/file-session-store.js';
export { StoreRegistration, defineStore, type StoreFactory, type StoreOpenOptions } from './core/store/store-registration.js';
export { bindStore, type StoreModule } from './core/store/bind-store.js';
export { openStore } from './core/store/open-store.js';
export {
  FileProvisionStore,
  MemoryProvisionStore,
  openProvisionStore,
  Provisioner,
  ProvisionStoreToken,
  TAG_PATTERN,
  type Ensured,
  type HostVersion,
  type ProvisionBase,
  type ProvisionEntry,
  type ProvisionFactory,
  type ProvisionKey,
  type ProvisionStore,
  type PruneReport,
  type VersionedResources,
  type VersionView,
} from './core/provision/index.js';
export { StoreConfig, StoreRetentionConfig } from './core/config/store-config.js';
export { MemoryStoreConfig } from './core/store/memory/memory-store.config.js';
export { FileStoreConfig } from './core/store/file/file-store.config.js';
export { RedisStoreConfig } from './distributed/redis-store/redis-store.config.js';
export { redisStoreModule } from './distributed/redis-store/redis-store.module.js';
export { distributedModule } from './distributed/distributed.module.js';
export { RUNTIME_MODES, RuntimeConfig, RuntimeConfigToken, runtimeConfigSection, type RuntimeMode } from './distributed/runtime.config.js';
export type { PrunableSessionStore, PruneOptions, RetentionOptions } from './core/store/retention.js';
export { exportCassette, formatCassette, parseCassette, readCassette, writeCassette, type Cassette } from './core/store/cassette.js';
export type { LedgerEntry, LedgerState } from './core/tools/tool-ledger.js';
export type { AgentRxConfig } from './core/config/agentrx.config.js';
export type { ProviderId } from './default-modules.js';
export { ConfigSections } from './core/config/config-tokens.js';
export type { ConfigSection } from './core/config/config-section.js';
export { validateConfig } from './core/config/load-config.js';
export { Secret } from './core/config/secret.js';
export { bindPlugin, bindProvider, pluginModule } from './core/di/bind-plugin.js';
export { ContainerModule, inject, injectable, optional } from './core/util/inversify.js';
export { createClient, HttpClientFactory, LazyHttpClient } from './core/http/http-client-factory.js';
export { localProviderModule } from './plugins/providers/local/local.module.js';
export type { LocalProviderOptions } from './plugins/providers/local/local.config.js';
export { demoAgUiToolsModule, demoToolsModule } from './plugins/tools/tools.module.js';
export {
  formatMcpProgress,
  mcpModule,
  mcpProgressModule,
  type McpCallResult,
  type McpContent,
  type McpOptions,
  type McpProgressEvent,
  type McpSdkImporter,
  type McpServerOptions,
} from './plugins/mcp/index.js';
export { TerminalConsumer } from './consumers/terminal/terminal.consumer.js';
export { JsonlConsumer } from './consumers/jsonl/jsonl.consumer.js';
// From their own files, not the folder's index: what the index re-exports besides them would load
// the endpoint's code (routing, threads, page), which loads at the first handler made.
export { aguiHttpModule } from './servers/agui-http/agui-http.module.js';
export { createAgUiHandler } from './servers/agui-http/agui-http.handler.js';
export { startAgUiServer } from './servers/agui-http/agui-http.server.js';
export type {
  AgUiHandlerOptions,
  AgUiHttpHandler,
  AgUiHttpOptions,
  AgUiHttpOptionsInput,
  AgUiPage,
  AgUiRunRequest,
  AgUiServer,
  AgUiServerOptions,
  AgUiSessionHost,
} from './servers/agui-http/index.js';
export { OtelConsumer, type OtelStopContext } from './consumers/otel/otel.consumer.js';
export type { OtelConsumerOptions, OtelConfig } from './consumers/otel/otel.config.js';
export { otelConsumerModule } from './consumers/otel/otel.module.js';
export { agentCoreProviderModule } from './plugins/providers/bedrock-agentcore/agentcore.module.js';
export type { AgentCoreProviderOptions } from './plugins/providers/bedrock-agentcore/agentcore.config.js';
export { cmaProviderModule } from './plugins/providers/claude-managed-agents/cma.module.js';
export { CmaAgentProvider } from './plugins/providers/claude-managed-agents/cma.provider.js';
export type { CmaProviderOptions } from './plugins/providers/claude-managed-agents/cma.config.js';
export { toolConfirmationEvent } from './plugins/providers/claude-managed-agents/cma-wire.js';
export {
  checkArtifactName,
  readArtifact,
  type ArtifactBody,
  type ArtifactCallOptions,
  type ArtifactDownload,
  type ArtifactInfo,
  type ArtifactNameRule,
  type ArtifactPutOptions,
  type Artifacts,
} from './core/artifacts/index.js';
export { CMA_INPUTS_FOLDER, CMA_OUTPUTS_FOLDER } from './plugins/providers/claude-managed-agents/cma-files.js';
export {
  AGENTCORE_CHUNK_BYTES,
  AGENTCORE_DEFAULT_STORAGE_PATH,
  AGENTCORE_MAX_COMMAND_CHARS,
} from './plugins/providers/bedrock-agentcore/agentcore-storage-limits.js';
