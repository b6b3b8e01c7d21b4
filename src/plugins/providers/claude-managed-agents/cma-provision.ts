import { createHash } from 'node:crypto';
import { AgentRxError, isAgentRxError, toAgentRxError } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import type { AgentSpec } from '../../../core/model.js';
import type { Provisioner } from '../../../core/provision/provisioner.js';
import type { VersionedResources } from '../../../core/provision/versioned-resources.js';
import { cmaNameOf } from './cma-names.js';
import { isMap, type WireMap } from './cma-wire.js';

/**
 * Content-addressed provisioning of the Managed Agents agent and environment: a resource is named
 * `<base>_<digest8>` where `digest8` is the first 8 hex digits of the SHA-256 of the canonical JSON
 * of its body (without the name). The same spec always maps to the same name, so creating it
 * twice (another process, or a replayed POST) answers 409 and the existing resource is recovered
 * by its exact name; a changed spec gets a new name instead of silently reusing a stale agent.
 * The versions are `CmaVersions`; the bookkeeping over them (provision store, tags) is the core
 * `Provisioner`'s.
 */

/** What `provision` returns and `open`/`teardown` take. Durable: plain JSON. */
export interface CmaHandle {
  /** Agent new sessions run (`agent` of `POST /v1/sessions`). */
  readonly agentId: string;
  /** Environment new sessions run in. */
  readonly environmentId: string;
  /** Content-addressed names of what was provisioned (absent for ids taken from the config). */
  readonly agentName?: string;
  readonly environmentName?: string;
  /** Full hex digests of the provisioned versions (absent for ids taken from the config); teardown goes through them. */
  readonly agentDigest?: string;
  readonly environmentDigest?: string;
  /**
   * Which resources this handle created (teardown archives only those). Ids from the config and
   * resources adopted by their content-addressed name (another process may use them) are false.
   */
  readonly provisioned: { readonly agent: boolean; readonly environment: boolean };
}

/** True for a value shaped like a CmaHandle. */
export function isCmaHandle(v: unknown): v is CmaHandle {
  return isMap(v) && typeof v['agentId'] === 'string' && typeof v['environmentId'] === 'string' && isMap(v['provisioned']);
}

/** JSON with object keys sorted at every level and no whitespace; `undefined` members are left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .filter((k) => (value as WireMap)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as WireMap)[k])}`);
  return `{${entries.join(',')}}`;
}

/** `<base>_<digest8>` for `body` under the Managed Agents name policy (see `cmaNameOf`). */
export function contentAddressedName(base: string, body: unknown): string {
  return cmaNameOf(base, createHash('sha256').update(canonicalJson(body)).digest('hex'));
}

/** The agent body (without `name`) for a spec: model, system prompt and custom tools. */
export function agentBodyOf(spec: AgentSpec, defaultModel: string): WireMap {
  return {
    model: spec.model ?? defaultModel,
    ...(spec.systemPrompt !== undefined ? { system: spec.systemPrompt } : {}),
    tools: spec.tools.map((t) => ({ type: 'custom', name: t.name, description: t.description, input_schema: t.inputSchema })),
  };
}

/** What `provisionCma` needs besides the provisioner. */
export interface ProvisionSettings {
  /** Existing agent to use (nothing is created for it). */
  readonly agentId?: string;
  /** Existing environment to use (nothing is created for it). */
  readonly environmentId?: string;
  /** `<agent name>:<tag>`: use the stored agent version the tag points at (nothing is created for it). */
  readonly agentRef?: string;
  /** Budget of the rollback after a failed later step, ms. Default 30 000. */
  readonly rollbackTimeoutMs?: number;
}

/** One provisioned (or configured) resource of a handle. */
interface Part {
  readonly id: string;
  readonly name?: string;
  readonly digest?: string;
  readonly created: boolean;
}

/**
 * The environment and the agent for `spec` through `provisioner` (the provision store first, then
 * the host: create, or recover by exact name on 409), unless ids are configured; with `agentRef`
 * the agent is the stored version its tag points at (`unknown_tag` / `unknown_version` before any
 * host call, never a fallback). Rejects with the provisioner's AgentRxError.
 *
 * All or nothing: when the agent step fails after this call created the environment, the
 * environment is archived again and evicted from the store (with its own deadline, so a cancelled
 * provisioning still cleans up), and the rejection is the agent's error with `details.rolledBack`
 * (and, when archiving failed too, `details.rollbackError` and a message naming the environment
 * left behind). An environment that was configured, reused from the store or adopted by name
 * (another process may use it) is never touched.
 */
export async function provisionCma(
  provisioner: Provisioner,
  resources: VersionedResources,
  spec: AgentSpec,
  settings: ProvisionSettings,
  signal: AbortSignal,
  logger: Logger,
): Promise<CmaHandle> {
  const tagged = settings.agentId === undefined && settings.agentRef !== undefined ? await provisioner.resolve('agent', settings.agentRef) : undefined;
  const env: Part =
    settings.environmentId !== undefined ? { id: settings.environmentId, created: false } : await provisioner.ensure('environment', spec, signal);
  let agent: Part;
  if (settings.agentId !== undefined) agent = { id: settings.agentId, created: false };
  else if (tagged !== undefined) agent = { id: tagged.id, name: tagged.name, digest: tagged.digest, created: false };
  else {
    try {
      agent = await provisioner.ensure('agent', spec, signal);
    } catch (e) {
      if (!env.created) throw e;
      throw await rollbackEnvironment(provisioner, resources, env, toAgentRxError(e), settings.rollbackTimeoutMs ?? 30_000, logger);
    }
  }
  return {
    agentId: agent.id,
    environmentId: env.id,
    ...(agent.name !== undefined ? { agentName: agent.name } : {}),
    ...(env.name !== undefined ? { environmentName: env.name } : {}),
    ...(agent.digest !== undefined ? { agentDigest: agent.digest } : {}),
    ...(env.digest !== undefined ? { environmentDigest: env.digest } : {}),
    provisioned: { agent: agent.created, environment: env.created },
  };
}

/**
 * Archives what `handle` provisioned (the agent, then the environment), each through
 * `removeVersion`: evicted from the store only once the host accepted it. A 404 counts as done.
 */
export async function teardownCma(provisioner: Provisioner, resources: VersionedResources, handle: CmaHandle, signal: AbortSignal): Promise<void> {
  if (handle.provisioned.agent) await removeVersion(provisioner, resources, 'agent', handle.agentDigest, handle.agentId, signal);
  if (handle.provisioned.environment) await removeVersion(provisioner, resources, 'environment', handle.environmentDigest, handle.environmentId, signal);
}

/**
 * Removes one version: through the provisioner (host, then store eviction and its tags) when the
 * digest is known; when the store does not know the version (a store that failed when it was
 * provisioned, or a handle without digest) the host removal alone. Host errors propagate.
 */
export async function removeVersion(
  provisioner: Provisioner,
  resources: VersionedResources,
  kind: string,
  digest: string | undefined,
  id: string,
  signal: AbortSignal,
): Promise<void> {
  if (digest !== undefined) {
    try {
      await provisioner.teardown(kind, digest, signal);
      return;
    } catch (e) {
      if (!isAgentRxError(e, 'unknown_version') && !isAgentRxError(e, 'store_error')) throw e;
    }
  }
  await resources.remove(kind, id, signal);
}

/**
 * Archives the environment a failed provisioning created and returns the original error, annotated
 * with what the rollback did (never the rollback's error instead of the original one).
 */
async function rollbackEnvironment(
  provisioner: Provisioner,
  resources: VersionedResources,
  env: Part,
  original: AgentRxError,
  timeoutMs: number,
  logger: Logger,
): Promise<AgentRxError> {
  const { id } = env;
  const name = env.name ?? id;
  try {
    await removeVersion(provisioner, resources, 'environment', env.digest, id, AbortSignal.timeout(timeoutMs));
    logger.warn('claude-managed-agents: provisioning failed; archived the environment it had created', { environmentId: id, name, error: original.message });
    return new AgentRxError(original.code, original.message, { ...original.details, rolledBack: true }, { cause: original });
  } catch (e) {
    const why = toAgentRxError(e).message;
    logger.warn('claude-managed-agents: provisioning failed and archiving the environment it had created failed too', {
      environmentId: id,
      name,
      error: original.message,
      rollbackError: why,
    });
    return new AgentRxError(
      original.code,
      `${original.message}; rolling back also failed: the environment "${name}" (${id}) it created could not be archived (${why}): archive it with POST /v1/environments/${id}/archive`,
      { ...original.details, rolledBack: false, rollbackError: why, environmentId: id },
      { cause: original },
    );
  }
}
