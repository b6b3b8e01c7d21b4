import { IsBoolean, IsInt, IsObject, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength, ValidateBy } from '../../../core/util/class-validator.js';
import { CoerceBoolean, CoerceNumber, type ConfigSection } from '../../../core/config/config-section.js';
import { IsSecret, SecretField, type Secret } from '../../../core/config/secret.js';
import { ANTHROPIC_VERSION, CMA_BETA } from './cma-wire.js';

/**
 * Token under which the validated `CmaProviderOptionsClass` instance is bound
 * (`toConstantValue`). The facade binds it only when the section is valid, so the provider injects
 * it `@optional()`.
 */
export const CmaProviderOptions = Symbol('CmaProviderOptions');

/** `<base>:<tag>` (a base may hold `:`; the tag is what follows the last one). */
const AGENT_REF = /^.+:[A-Za-z0-9._-]{1,64}$/;

/** Validated options of the `claude-managed-agents` provider (config section `providers.claude-managed-agents`). */
export type CmaProviderOptions = CmaProviderOptionsClass;

/** Options of the `claude-managed-agents` provider (Anthropic Claude Managed Agents, beta `managed-agents-2026-04-01`). */
export class CmaProviderOptionsClass {
  /**
   * Anthropic API key, sent as `x-api-key`. Required. A `Secret`: never logged, never in an error
   * message or `inspect` output.
   */
  @SecretField()
  @IsSecret()
  apiKey!: Secret;

  /**
   * API origin, e.g. `https://api.anthropic.com`. Request paths start with `/v1`, so a base URL
   * ending in `/v1` or `/v1/` (as other providers' base URLs do) is accepted and normalized to the
   * origin (see `cmaApiOrigin`). Tests point it at the loopback emulator.
   */
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  baseUrl: string = 'https://api.anthropic.com';

  /** `anthropic-version` header. */
  @IsString()
  @MinLength(1)
  anthropicVersion: string = ANTHROPIC_VERSION;

  /** `anthropic-beta` header (comma-separated betas; must include `managed-agents-2026-04-01`). */
  @IsString()
  @Matches(/managed-agents-/, { message: '$property must include a managed-agents beta' })
  beta: string = CMA_BETA;

  /** Model of provisioned agents; `agent.model` in the core config (AgentSpec.model) wins. */
  @IsString()
  @MinLength(1)
  model: string = 'claude-sonnet-4-5';

  /** Use this existing agent instead of provisioning one (then `environmentId` is used or provisioned). */
  @IsOptional()
  @IsString()
  @MinLength(1)
  agentId?: string;

  /**
   * The agent by tag, `<agent name>:<tag>` (e.g. `support:prod`): sessions run the agent version
   * the tag points at in the provision store (set with `agentrx agents tag`). A tag the store does
   * not know fails the run with `unknown_tag`, never falls back to provisioning. Not together with
   * `agentId`.
   */
  @IsOptional()
  @IsString()
  @Matches(AGENT_REF, { message: "$property must be '<agent name>:<tag>' with a tag of 1-64 of A-Z a-z 0-9 . _ - (e.g. 'support:prod')" })
  @NotWith('agentId')
  agent?: string;

  /** Use this existing environment instead of provisioning one. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  environmentId?: string;

  /** Base name of the provisioned environment (`<base>_<digest8>`). */
  @IsString()
  @Matches(/^[a-zA-Z0-9_-]{1,64}$/)
  environmentName: string = 'agentrx';

  /** Environment `config`, sent verbatim when provisioning. */
  @IsObject()
  environment: Record<string, unknown> = { type: 'cloud', networking: { type: 'unrestricted' } };

  /** Per-request timeout of control-plane calls (for the stream: the wait for its headers), ms. */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  requestTimeoutMs: number = 60_000;

  /** Longest silence on the event stream (heartbeats count), ms. Unset: `limits.streamIdleTimeoutMs`. */
  @IsOptional()
  @CoerceNumber()
  @IsInt()
  @Min(1)
  streamIdleTimeoutMs?: number;

  /** Retries of a retryable control-plane call (see the provider's retry policy). */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(10)
  maxRetries: number = 3;

  /** Backoff base of those retries, ms (equal jitter, doubling; a Retry-After header wins). */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  retryBaseMs: number = 500;

  /** `limit` of each list page when walking event history. */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  @Max(1000)
  listPageSize: number = 100;

  /** Path of the event stream; `{id}` is replaced by the session id. */
  @IsString()
  @Matches(/\{id\}/, { message: '$property must contain {id}' })
  streamPath: string = '/v1/sessions/{id}/events/stream';

  /**
   * Longest SSE frame (bytes of data since the last frame boundary) the event stream accepts. A
   * frame that grows past it — a stream that never sends the blank line ending a frame, by fault
   * or malice — fails the stream with `stream_error` instead of buffering without bound until the
   * idle timeout. The check counts UTF-16 code units of the decoded text, never more than its
   * UTF-8 bytes, so no frame within the limit is refused. Default 8 MiB (far above any event the
   * service sends); at least 1024. Like a drop, the failure makes the Session re-attach and
   * recover missed events from the history.
   */
  @CoerceNumber()
  @IsInt()
  @Min(1024)
  maxFrameBytes: number = DEFAULT_MAX_FRAME_BYTES;

  /**
   * Ask for `event_deltas` previews of `agent.message` on the stream, so text arrives while it is
   * produced (never twice: the final message only adds what the previews missed).
   */
  @CoerceBoolean()
  @IsBoolean()
  eventDeltas: boolean = false;
}

/** Fails the decorated option when `other` is set as well (the two name the same thing two ways). */
function NotWith(other: string): PropertyDecorator {
  return ValidateBy({
    name: 'notWith',
    constraints: [other],
    validator: {
      validate: (value: unknown, args) => value === undefined || (args?.object as Record<string, unknown>)[other] === undefined,
      defaultMessage: () => `set either $property or ${other}, not both`,
    },
  });
}

/** Default `maxFrameBytes`: 8 MiB. */
export const DEFAULT_MAX_FRAME_BYTES = 8 * 1024 * 1024;

/**
 * The API origin of `baseUrl`: trailing slashes and one trailing `/v1` removed, because every
 * request path already starts with `/v1` (`https://api.anthropic.com/v1/` →
 * `https://api.anthropic.com`).
 */
export function cmaApiOrigin(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** The `claude-managed-agents` config section: validated when `provider` is `claude-managed-agents`. */
export const cmaConfigSection: ConfigSection<CmaProviderOptionsClass> & { required: NonNullable<ConfigSection['required']> } = {
  key: 'claude-managed-agents',
  options: CmaProviderOptionsClass,
  token: CmaProviderOptions,
  required: (cfg) => cfg.provider === 'claude-managed-agents',
};
