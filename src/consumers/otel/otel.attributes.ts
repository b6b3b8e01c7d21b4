import type { Attributes, Span } from '@opentelemetry/api';
import { otelApi } from './otel-api.js';
import type { AgentRxConfig } from '../../core/config/agentrx.config.js';
import type { ProviderRegistration } from '../../core/plugin/provider-registration.js';

/** Attribute keys (OpenTelemetry GenAI semantic conventions, plus `agentrx.*`). */
export const Attr = {
  operation: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  outputMessages: 'gen_ai.output.messages',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  errorType: 'error.type',
  provider: 'agentrx.provider',
  sessionId: 'agentrx.session.id',
  stopReason: 'agentrx.session.stop_reason',
  sessionRuns: 'agentrx.session.runs',
  totalInputTokens: 'agentrx.usage.input_tokens',
  totalOutputTokens: 'agentrx.usage.output_tokens',
  runId: 'agentrx.run.id',
  runTurns: 'agentrx.run.turns',
  runTerminal: 'agentrx.run.terminal',
  turnNumber: 'agentrx.turn.number',
  turnTerminal: 'agentrx.turn.terminal',
  turnToolCalls: 'agentrx.turn.tool_calls',
  toolResultReceived: 'agentrx.tool.result_received',
  toolDurationMs: 'agentrx.tool.duration_ms',
  toolReplayed: 'agentrx.tool.replayed',
} as const;

/** What every span of a session is labelled with: who ran, on which host, with which model. */
export interface SpanLabels {
  readonly agentName: string;
  /** `gen_ai.provider.name`. */
  readonly providerName: string;
  /** The agentrx provider id (`agentrx.provider`), when known. */
  readonly providerId: string | undefined;
  readonly requestModel: string | undefined;
}

/** A failure to record on a span: `error.type` and the status description. */
export interface Failure {
  readonly type: string;
  readonly message: string;
}

/** A tool call as announced: its id, name, start and (with `captureContent`) its arguments. */
export interface ToolCallInfo {
  readonly id: string;
  readonly name: string;
  readonly args: string;
}

/** How a tool call ended, as far as the events tell. */
export interface ToolOutcome {
  /** A TOOL_CALL_RESULT arrived for it. */
  readonly received: boolean;
  readonly content?: string;
  readonly isError?: boolean;
  readonly durationMs?: number;
  readonly replayed?: boolean;
  /** The run failed before the call got a result. */
  readonly error?: Failure;
}

/** Attributes of the `agentrx.session` span. */
export function sessionAttributes(labels: SpanLabels, threadId: string, sessionId: string | undefined): Attributes {
  const attributes: Attributes = { [Attr.conversationId]: threadId, [Attr.agentName]: labels.agentName, [Attr.providerName]: labels.providerName };
  if (sessionId !== undefined) attributes[Attr.sessionId] = sessionId;
  if (labels.providerId !== undefined) attributes[Attr.provider] = labels.providerId;
  return attributes;
}

/** Attributes of an `invoke_agent` (run) span. */
export function runAttributes(labels: SpanLabels, threadId: string, runId: string): Attributes {
  const attributes: Attributes = {
    [Attr.operation]: 'invoke_agent',
    [Attr.providerName]: labels.providerName,
    [Attr.agentName]: labels.agentName,
    [Attr.conversationId]: threadId,
    [Attr.runId]: runId,
  };
  if (labels.requestModel !== undefined) attributes[Attr.requestModel] = labels.requestModel;
  return attributes;
}

/** Name and attributes of a `chat` (model request) span. */
export function chatSpan(labels: SpanLabels, threadId: string): { name: string; attributes: Attributes } {
  const attributes: Attributes = { [Attr.operation]: 'chat', [Attr.providerName]: labels.providerName, [Attr.conversationId]: threadId };
  if (labels.requestModel === undefined) return { name: 'chat', attributes };
  attributes[Attr.requestModel] = labels.requestModel;
  return { name: `chat ${labels.requestModel}`, attributes };
}

/** Name and attributes of an `execute_tool` span; arguments and result only with `captureContent`. */
export function toolSpan(call: ToolCallInfo, outcome: ToolOutcome, threadId: string, captureContent: boolean): { name: string; attributes: Attributes } {
  const attributes: Attributes = {
    [Attr.operation]: 'execute_tool',
    [Attr.toolName]: call.name,
    [Attr.toolCallId]: call.id,
    [Attr.toolType]: 'function',
    [Attr.conversationId]: threadId,
    [Attr.toolResultReceived]: outcome.received,
  };
  if (outcome.durationMs !== undefined) attributes[Attr.toolDurationMs] = outcome.durationMs;
  if (outcome.replayed !== undefined) attributes[Attr.toolReplayed] = outcome.replayed;
  if (captureContent) {
    if (call.args.length > 0) attributes[Attr.toolArguments] = call.args;
    if (outcome.content !== undefined) attributes[Attr.toolResult] = outcome.content;
  }
  return { name: call.name.length > 0 ? `execute_tool ${call.name}` : 'execute_tool', attributes };
}

/** Status ERROR with `error.type` (Recording Errors convention). */
export function fail(span: Span, failure: Failure): void {
  span.setAttribute(Attr.errorType, failure.type);
  span.setStatus({ code: otelApi().SpanStatusCode.ERROR, message: failure.message });
}

/** A host's raw stop reason as one finish reason: a string, or an object's string `type`. */
export function finishReason(stopReason: unknown): string | undefined {
  if (typeof stopReason === 'string' && stopReason.length > 0) return stopReason;
  if (typeof stopReason === 'object' && stopReason !== null && 'type' in stopReason && typeof stopReason.type === 'string') return stopReason.type;
  return undefined;
}

/** `gen_ai.output.messages` of a turn: its text and tool calls as one assistant message. */
export function outputMessages(text: string, calls: readonly ToolCallInfo[], finish: string): string {
  const parts: Record<string, unknown>[] = [];
  if (text.length > 0) parts.push({ type: 'text', content: text });
  for (const call of calls) parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: parseArgs(call.args) });
  return JSON.stringify([{ role: 'assistant', parts, finish_reason: finish }]);
}

function parseArgs(args: string): unknown {
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}

/**
 * `gen_ai.provider.name` for an agentrx provider id: the `telemetryName` its registration gives (a
 * well-known value of the GenAI conventions), else the id; `_OTHER` when no provider is known.
 */
export function genAiProviderName(providerId: string | undefined, registrations: readonly Pick<ProviderRegistration, 'id' | 'telemetryName'>[] = []): string {
  if (providerId === undefined) return '_OTHER';
  return registrations.find((r) => r.id === providerId)?.telemetryName ?? providerId;
}

/** The `model` of the selected provider's validated config section, when it has one. */
export function sectionModel(config: AgentRxConfig | undefined, providerId: string | undefined): string | undefined {
  if (!config || providerId === undefined) return undefined;
  const section: unknown = config.providers?.[providerId];
  const model = typeof section === 'object' && section !== null && 'model' in section ? section.model : undefined;
  return typeof model === 'string' && model.length > 0 ? model : undefined;
}
