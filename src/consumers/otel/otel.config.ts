import type { TracerProvider } from '@opentelemetry/api';
import { IsBoolean, IsOptional, IsString, MinLength } from '../../core/util/class-validator.js';
import { CoerceBoolean, type ConfigSection } from '../../core/config/config-section.js';

/**
 * Token under which `otelConsumerModule` binds the programmatic {@link OtelConsumerOptions}
 * (`toConstantValue`). Optional: without it the consumer uses the global TracerProvider.
 */
export const OtelConsumerOptions = Symbol('OtelConsumerOptions');

/**
 * Programmatic options of the OpenTelemetry consumer. Every field is optional; a field given
 * here wins over the `otel` config section, which wins over what is derived from the validated
 * `AgentRxConfig` (agent name, provider id, model), which wins over the built-in default.
 */
export interface OtelConsumerOptions {
  /**
   * Where spans go. Default: the global provider (`trace.getTracerProvider()` of
   * `@opentelemetry/api`), so an app that registers its SDK globally needs nothing here. The
   * tracer is named `agentrx`.
   */
  readonly tracerProvider?: TracerProvider;
  /**
   * Record content as span attributes: the assistant text and tool calls of each model request
   * (`gen_ai.output.messages` on `chat` spans) and tool arguments and results
   * (`gen_ai.tool.call.arguments` / `gen_ai.tool.call.result` on `execute_tool` spans).
   * Default false: spans then carry ids, names, timings, token counts and error codes only.
   * Values are not truncated here; bound them with the SDK's
   * `spanLimits.attributeValueLengthLimit`.
   */
  readonly captureContent?: boolean;
  /** `gen_ai.agent.name` and the `invoke_agent <name>` span name. Default `agent.name` of the config, else `agentrx`. */
  readonly agentName?: string;
  /**
   * The agentrx provider id the sessions run on (`agentrx.provider`), also used to derive
   * `gen_ai.provider.name`. Default the config's `provider`. The AG-UI stream does not name
   * the provider, so a per-run `provider` override of `rx.run` is not seen here.
   */
  readonly providerId?: string;
  /**
   * `gen_ai.provider.name`. Default derived from the provider id: `local` → `openai` (it speaks
   * the OpenAI chat-completions API), `claude-managed-agents` → `anthropic`,
   * `bedrock-agentcore` → `aws.bedrock`, any other id → the id itself.
   */
  readonly providerName?: string;
  /**
   * `gen_ai.request.model` and the `chat <model>` span name. Default `agent.model` of the config,
   * else the `model` of the selected provider's config section; unset when neither exists.
   */
  readonly requestModel?: string;
  /**
   * Start every session span as the root of a new trace. Default false: the session span is a
   * child of the OpenTelemetry context active where the session's first event is delivered
   * (with an async context manager registered, the caller of `rx.run`/`rx.start`, e.g. an HTTP
   * request span); without a context manager that is the root context anyway.
   */
  readonly newTrace?: boolean;
}

/** Token under which the validated `otel` config section is bound. */
export const OtelConfig = Symbol('OtelConfig');

/** The validated `otel` config section. */
export type OtelConfig = OtelConfigOptions;

/**
 * The `otel` section of an agentrx config file (top-level key `otel`), for what can be set
 * without code. Each field means the same as in {@link OtelConsumerOptions}; programmatic
 * options win. Unknown keys are errors, like everywhere in the config.
 */
export class OtelConfigOptions {
  /** See {@link OtelConsumerOptions.captureContent}. Accepts `"true"`/`"false"` from `${VAR}`. */
  @IsOptional()
  @CoerceBoolean()
  @IsBoolean()
  captureContent?: boolean;

  /** See {@link OtelConsumerOptions.agentName}. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  agentName?: string;

  /** See {@link OtelConsumerOptions.providerName}. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  providerName?: string;

  /** See {@link OtelConsumerOptions.requestModel}. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  requestModel?: string;

  /** See {@link OtelConsumerOptions.newTrace}. Accepts `"true"`/`"false"` from `${VAR}`. */
  @IsOptional()
  @CoerceBoolean()
  @IsBoolean()
  newTrace?: boolean;
}

/** The `otel` config section (top level), contributed by `otelConsumerModule`. Never required. */
export const otelConfigSection: ConfigSection<OtelConfigOptions> = {
  key: 'otel',
  scope: 'root',
  options: OtelConfigOptions,
  token: OtelConfig,
};
