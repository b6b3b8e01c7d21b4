import type { BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import type { BedrockAgentCoreControlClient } from '@aws-sdk/client-bedrock-agentcore-control';
import { AgentRxError } from '../../../core/errors.js';
import { isTransientStatus } from '../../../core/http/retry.js';
import type { AgentCoreProviderOptions } from './agentcore.config.js';
import { decodingAwareMarshaller, type EventStreamMarshallerLike } from './agentcore-frames.js';
import { loadControlSdk, loadDataSdk, type AgentCoreControlSdk, type AgentCoreDataSdk } from './agentcore-sdk.js';

/**
 * The two official AWS SDK clients of the `bedrock-agentcore` provider (SigV4, credential chain,
 * event-stream decoding), built from the provider options, and the mapping of SDK errors to
 * typed `AgentRxError`s. SDK retries are off (`maxAttempts: 1`): the provider decides what may
 * be repeated. The SDK packages are optional: they are imported when a client is first created
 * (see `agentcore-sdk.ts`), never by loading this module.
 */

/** Static AWS credentials as the SDK consumes them. */
export interface AgentCoreCredentials {
  /** The access key id. */
  readonly accessKeyId: string;
  /** The secret access key (revealed only here, for the SDK signer). */
  readonly secretAccessKey: string;
  /** The STS session token of temporary credentials. */
  readonly sessionToken?: string;
}

/** Where region defaults come from (`process.env` in production). */
export type AgentCoreEnv = Readonly<Record<string, string | undefined>>;

/**
 * The region: `options.region`, else `AWS_REGION`, else `AWS_DEFAULT_REGION`. Never a built-in
 * default. Throws `invalid_config` naming the three places when none is set.
 */
export function resolveRegion(options: Pick<AgentCoreProviderOptions, 'region'>, env: AgentCoreEnv = process.env): string {
  const region = options.region ?? nonEmpty(env['AWS_REGION']) ?? nonEmpty(env['AWS_DEFAULT_REGION']);
  if (region === undefined) {
    throw new AgentRxError(
      'invalid_config',
      'bedrock-agentcore: no AWS region: set providers.bedrock-agentcore.region, or the AWS_REGION / AWS_DEFAULT_REGION environment variable',
      { path: 'providers.bedrock-agentcore.region' },
    );
  }
  return region;
}

/**
 * Credentials for the SDK: a provider function over the configured static keys (the secret is
 * revealed only when the SDK signs), or undefined for the AWS default credential chain.
 */
export function credentialsOf(
  options: Pick<AgentCoreProviderOptions, 'accessKeyId' | 'secretAccessKey' | 'sessionToken'>,
): (() => Promise<AgentCoreCredentials>) | undefined {
  const { accessKeyId, secretAccessKey, sessionToken } = options;
  if (accessKeyId === undefined && secretAccessKey === undefined) return undefined;
  if (accessKeyId === undefined || secretAccessKey === undefined) {
    throw new AgentRxError('invalid_config', 'bedrock-agentcore: set both accessKeyId and secretAccessKey, or neither (the AWS default credential chain)', {
      path: 'providers.bedrock-agentcore.accessKeyId',
    });
  }
  return async () => ({
    accessKeyId,
    secretAccessKey: secretAccessKey.reveal(),
    ...(sessionToken !== undefined ? { sessionToken: sessionToken.reveal() } : {}),
  });
}

/**
 * The data-plane client (`InvokeHarness`), with its event-stream marshaller wrapped so that frame
 * failures say whether the host sent an exception or agentrx could not decode a frame (see
 * `agentcore-frames.ts`). Imports the SDK on first use. Rejects with `invalid_config` without a
 * region or when the SDK is not installed.
 */
export async function createDataClient(
  options: AgentCoreProviderOptions,
  env: AgentCoreEnv = process.env,
  sdk?: AgentCoreDataSdk,
): Promise<BedrockAgentCoreClient> {
  const region = resolveRegion(options, env);
  const credentials = credentialsOf(options);
  const { BedrockAgentCoreClient } = sdk ?? (await loadDataSdk());
  const client = new BedrockAgentCoreClient({
    region,
    maxAttempts: 1,
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    ...(credentials ? { credentials } : {}),
  });
  // The resolved config is the SDK's serde context, read at each request: wrapping its marshaller
  // here applies to every stream this client decodes.
  const config: { eventStreamMarshaller?: EventStreamMarshallerLike } = client.config;
  if (config.eventStreamMarshaller) config.eventStreamMarshaller = decodingAwareMarshaller(config.eventStreamMarshaller);
  return client;
}

/**
 * The control-plane client (`CreateHarness`…). `controlEndpoint`, else `endpoint`. Imports the SDK
 * on first use. Rejects with `invalid_config` without a region or when the SDK is not installed.
 */
export async function createControlClient(
  options: AgentCoreProviderOptions,
  env: AgentCoreEnv = process.env,
  sdk?: AgentCoreControlSdk,
): Promise<BedrockAgentCoreControlClient> {
  const region = resolveRegion(options, env);
  const credentials = credentialsOf(options);
  const endpoint = options.controlEndpoint ?? options.endpoint;
  const { BedrockAgentCoreControlClient } = sdk ?? (await loadControlSdk());
  return new BedrockAgentCoreControlClient({
    region,
    maxAttempts: 1,
    ...(endpoint !== undefined ? { endpoint } : {}),
    ...(credentials ? { credentials } : {}),
  });
}

/** What an SDK error looks like, loosely. */
interface SdkErrorLike {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly code?: unknown;
  readonly $fault?: unknown;
  readonly $metadata?: { readonly httpStatusCode?: unknown };
}

const TRANSPORT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'ERR_STREAM_PREMATURE_CLOSE',
]);
const THROTTLING = new Set(['ThrottlingException', 'ThrottledException', 'TooManyRequestsException', 'ServiceUnavailableException']);

/** The HTTP status an SDK error carries (a non-2xx response), if any. */
export function httpStatusOf(e: unknown): number | undefined {
  const status = (e as SdkErrorLike | undefined)?.$metadata?.httpStatusCode;
  return typeof status === 'number' && status >= 300 ? status : undefined;
}

/** True when `e` is a transport failure (reset, refused, timeout, premature close). */
export function isTransportError(e: unknown): boolean {
  for (let x: unknown = e, depth = 0; typeof x === 'object' && x !== null && depth < 4; depth++) {
    const o = x as SdkErrorLike & { cause?: unknown };
    if (typeof o.code === 'string' && TRANSPORT_CODES.has(o.code)) return true;
    if (o.name === 'TimeoutError') return true;
    if (typeof o.message === 'string' && /socket hang up|^aborted$|premature close|Truncated event message received/i.test(o.message)) return true;
    x = o.cause;
  }
  return false;
}

/**
 * Maps an error of a control-plane `send` to `http_error` (with `status`, `errorType`,
 * `operation`, `transient`: 408/429/5xx, throttling, transport) — or `provider_error` for
 * anything else. The message names the operation and the AWS error type, never a credential.
 */
export function controlError(operation: string, e: unknown): AgentRxError {
  if (e instanceof AgentRxError) return e;
  const o = (typeof e === 'object' && e !== null ? e : {}) as SdkErrorLike;
  const name = typeof o.name === 'string' ? o.name : 'Error';
  const message = typeof o.message === 'string' ? o.message : String(e);
  const status = httpStatusOf(e);
  if (status !== undefined) {
    return new AgentRxError('http_error', `${operation} returned HTTP ${status} ${name}: ${message}`, {
      operation,
      status,
      errorType: name,
      transient: isTransientStatus(status) || isThrottlingName(name),
    });
  }
  if (isTransportError(e)) return new AgentRxError('http_error', `${operation} failed: ${message}`, { operation, errorType: name, transient: true });
  return new AgentRxError('provider_error', `${operation} failed: ${name}: ${message}`, { operation, errorType: name, transient: false });
}

/** True for a throttling error name (retryable whatever its status). */
export function isThrottlingName(name: unknown): boolean {
  return typeof name === 'string' && THROTTLING.has(name);
}

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}
