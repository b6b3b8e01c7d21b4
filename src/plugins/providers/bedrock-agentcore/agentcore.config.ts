import { inspect } from 'node:util';
import { IsInt, IsObject, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength, ValidateBy, ValidateIf } from '../../../core/util/class-validator.js';
import type { AgentRxConfig } from '../../../core/config/agentrx.config.js';
import { CoerceNumber, IsStringRecord, type ConfigSection } from '../../../core/config/config-section.js';
import { IsSecret, REDACTED, Secret, SecretField, redactedView } from '../../../core/config/secret.js';

/** Token under which the validated `AgentCoreProviderOptionsClass` instance is bound (`toConstantValue`). */
export const AgentCoreProviderOptions = Symbol('AgentCoreProviderOptions');

/** Validated options of the `bedrock-agentcore` provider (config section `providers.bedrock-agentcore`). */
export type AgentCoreProviderOptions = AgentCoreProviderOptionsClass;

const URL_OPTIONS = { require_tld: false, require_protocol: true, protocols: ['http', 'https'] };
const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;
const ARN = /^arn:[a-z-]+:[a-z0-9-]+:/;
/** `<base>:<tag>` (a base may hold `:`; the tag is what follows the last one). */
const HARNESS_REF = /^.+:[A-Za-z0-9._-]{1,64}$/;

/**
 * Options of the `bedrock-agentcore` provider. Every option is optional with a valid default, so
 * loading the module never breaks a config that selects another provider; what a run needs (a
 * harness, a region) is checked when the provider provisions or opens a session, with an
 * `invalid_config` error that names the option.
 *
 * A session uses `harnessArn` when set; otherwise `provision` creates (or adopts) a harness from
 * the agent spec, which needs `executionRoleArn`.
 */
export class AgentCoreProviderOptionsClass {
  /** AWS region of both planes. Default: `AWS_REGION`, then `AWS_DEFAULT_REGION`; never a built-in region. */
  @IsOptional()
  @IsString()
  @Matches(REGION, { message: '$property must be an AWS region such as us-east-1' })
  region?: string;

  /** Data-plane endpoint (`InvokeHarness`): a VPC endpoint, a proxy, or the emulator. Default: the SDK's regional endpoint. */
  @IsOptional()
  @IsUrl(URL_OPTIONS)
  endpoint?: string;

  /** Control-plane endpoint (`CreateHarness`…). Default: `endpoint` when set, else the SDK's regional endpoint. */
  @IsOptional()
  @IsUrl(URL_OPTIONS)
  controlEndpoint?: string;

  /** Static credentials: the access key id. With `secretAccessKey`; both unset = the AWS default credential chain. */
  @ValidateIf((o: AgentCoreProviderOptionsClass) => o.accessKeyId !== undefined || o.secretAccessKey !== undefined)
  @IsString()
  @MinLength(1)
  accessKeyId?: string;

  /** Static credentials: the secret access key. Never logged, never in an error or `inspect` output. */
  @ValidateIf((o: AgentCoreProviderOptionsClass) => o.accessKeyId !== undefined || o.secretAccessKey !== undefined)
  @SecretField()
  @IsSecret()
  secretAccessKey?: Secret;

  /** Static credentials: the STS session token, if the keys are temporary. */
  @IsOptional()
  @SecretField()
  @IsSecret()
  sessionToken?: Secret;

  /** An existing harness to invoke. When set, `provision` makes no control-plane call. */
  @IsOptional()
  @IsString()
  @Matches(ARN, { message: '$property must be a harness ARN' })
  harnessArn?: string;

  /**
   * The harness by tag, `<agent name>:<tag>` (e.g. `support:prod`): sessions invoke the harness
   * version the tag points at in the provision store (set with `agentrx harnesses tag`). A tag the
   * store does not know fails the run with `unknown_tag`, never falls back to provisioning. Not
   * together with `harnessArn`.
   */
  @IsOptional()
  @IsString()
  @Matches(HARNESS_REF, { message: "$property must be '<agent name>:<tag>' with a tag of 1-64 of A-Z a-z 0-9 . _ - (e.g. 'support:prod')" })
  @ValidateBy({
    name: 'notWithHarnessArn',
    validator: {
      validate: (value: unknown, args) => value === undefined || (args?.object as AgentCoreProviderOptionsClass).harnessArn === undefined,
      defaultMessage: () => 'set either $property (a tag) or harnessArn, not both',
    },
  })
  harness?: string;

  /** `qualifier` query parameter of `InvokeHarness` (a harness endpoint/version). */
  @IsOptional()
  @IsString()
  @MinLength(1)
  qualifier?: string;

  /** `X-Amzn-Bedrock-AgentCore-Runtime-User-Id` header. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  runtimeUserId?: string;

  /** Per-invoke model override (`model.bedrockModelConfig.modelId`); omitted when unset so the harness model applies. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  model?: string;

  /** Per-invoke `maxIterations` of the server-side loop; omitted when unset (harness default). */
  @IsOptional()
  @CoerceNumber()
  @IsInt()
  @Min(1)
  maxIterations?: number;

  /** Per-invoke `maxTokens`; omitted when unset. */
  @IsOptional()
  @CoerceNumber()
  @IsInt()
  @Min(1)
  maxTokens?: number;

  /** Per-invoke `timeoutSeconds` of the server-side loop; omitted when unset. */
  @IsOptional()
  @CoerceNumber()
  @IsInt()
  @Min(1)
  timeoutSeconds?: number;

  /**
   * Longest silence in ms while waiting for the response and between two event-stream frames.
   * Exceeding it aborts the invoke; it is retried like a truncated stream, and after the last
   * attempt the turn fails with `timeout`.
   */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  idleTimeoutMs: number = 300_000;

  /**
   * Retries of a whole invoke after a transport error, HTTP 5xx/429 or a truncated stream (no
   * `messageStop`). Never after an exception frame or another 4xx.
   */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(10)
  maxRetries: number = 2;

  /** Backoff base in ms (equal jitter, doubling per retry, capped at 30 s). */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  retryBaseMs: number = 500;

  /** IAM role the harness runs as; required to create a harness (when `harnessArn` is unset). */
  @IsOptional()
  @IsString()
  @Matches(ARN, { message: '$property must be an IAM role ARN' })
  executionRoleArn?: string;

  /** Prefix of created harness names: `<prefix>_<agent name>_<digest8>`, fitted to `[a-zA-Z][a-zA-Z0-9_]{0,39}`. */
  @IsString()
  @Matches(/^[a-zA-Z][a-zA-Z0-9_]{0,19}$/, { message: '$property must be 1-20 characters of [a-zA-Z0-9_] starting with a letter' })
  harnessNamePrefix: string = 'agentrx';

  /** One budget in ms for the whole provisioning (create, 409 recovery, ready-wait). */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  provisionTimeoutMs: number = 600_000;

  /** Interval in ms between two `GetHarness` polls of the ready-wait. */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  pollIntervalMs: number = 2_000;

  /** `environment` of `CreateHarness`, passed verbatim. */
  @IsOptional()
  @IsObject()
  environment?: Record<string, unknown>;

  /** `environmentVariables` of `CreateHarness`. Values are never logged or shown. */
  @IsOptional()
  @IsStringRecord()
  environmentVariables?: Record<string, string>;

  /**
   * The harness's session storage mount path (its `sessionStorage` filesystem, kept across the
   * session's invocations): the folder `artifacts` lists, reads and writes. `/mnt/` plus one
   * folder of `[A-Za-z0-9._-]`, as AgentCore requires. Default `/mnt/data`.
   */
  @IsString()
  @Matches(/^\/mnt\/(?!\.\.?$)[A-Za-z0-9._-]+$/, { message: '$property must be /mnt/<folder> (one folder of A-Z a-z 0-9 . _ -), e.g. /mnt/data' })
  sessionStoragePath: string = '/mnt/data';

  /** Keeps the secret access key, session token and environment values out of `inspect` output. */
  [inspect.custom](): unknown {
    return this.toJSON();
  }

  /** Keeps the secret access key, session token and environment values out of JSON dumps. */
  toJSON(): Record<string, unknown> {
    const view = redactedView({ ...this }) as Record<string, unknown>;
    return {
      ...JSON.parse(JSON.stringify(view)),
      ...(this.environmentVariables !== undefined
        ? { environmentVariables: Object.fromEntries(Object.keys(this.environmentVariables).map((k) => [k, REDACTED])) }
        : {}),
    };
  }
}

/** The `bedrock-agentcore` config section: validated when `provider` is `bedrock-agentcore`, or when present. */
export const agentCoreConfigSection: ConfigSection<AgentCoreProviderOptionsClass> = {
  key: 'bedrock-agentcore',
  options: AgentCoreProviderOptionsClass,
  token: AgentCoreProviderOptions,
  required: (config: AgentRxConfig): boolean => config.provider === 'bedrock-agentcore',
};
