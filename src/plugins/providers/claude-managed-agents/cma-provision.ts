import { createHash } from 'node:crypto';
import { AgentRxError, isAgentRxError, toAgentRxError } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import type { AgentSpec } from '../../../core/model.js';
import type { CmaClient } from './cma-client.js';
import { isMap, type WireMap } from './cma-wire.js';

/**
 * Content-addressed provisioning of the Managed Agents agent and environment: a resource is named
 * `<base>_<digest8>` where `digest8` is the first 8 hex digits of the SHA-256 of the canonical JSON
 * of its body (without the name). The same spec always maps to the same name, so creating it
 * twice (another process, or a replayed POST) answers 409 and the existing resource is recovered
 * by its exact name; a changed spec gets a new name instead of silently reusing a stale agent.
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

/** `<base>_<digest8>` for `body` (see the module doc). */
export function contentAddressedName(base: string, body: unknown): string {
  return `${base}_${createHash('sha256').update(canonicalJson(body)).digest('hex').slice(0, 8)}`;
}

/** The agent body (without `name`) for a spec: model, system prompt and custom tools. */
export function agentBodyOf(spec: AgentSpec, defaultModel: string): WireMap {
  return {
    model: spec.model ?? defaultModel,
    ...(spec.systemPrompt !== undefined ? { system: spec.systemPrompt } : {}),
    tools: spec.tools.map((t) => ({ type: 'custom', name: t.name, description: t.description, input_schema: t.inputSchema })),
  };
}

/** What `provisionCma` needs besides the client. */
export interface ProvisionSettings {
  /** Model when the spec names none. */
  readonly model: string;
  /** Existing agent to use (nothing is created for it). */
  readonly agentId?: string;
  /** Existing environment to use (nothing is created for it). */
  readonly environmentId?: string;
  /** Base of the environment's content-addressed name. */
  readonly environmentName: string;
  /** Environment `config`, verbatim. */
  readonly environment: Readonly<Record<string, unknown>>;
  /** Budget of the rollback after a failed later step, ms. Default 30 000. */
  readonly rollbackTimeoutMs?: number;
}

/**
 * Creates (or recovers) the environment and the agent for `spec`, unless ids are configured.
 * Rejects with the client's AgentRxError; a 409 whose resource cannot be found by name rejects
 * with `http_error` naming it.
 *
 * All or nothing: when creating the agent fails after this call created the environment, the
 * environment is archived again (with its own deadline, so a cancelled provisioning still cleans
 * up), and the rejection is the agent's error with `details.rolledBack` (and, when archiving
 * failed too, `details.rollbackError` and a message naming the environment left behind). An
 * environment that was configured or adopted by name (another process may use it) is never
 * touched.
 */
export async function provisionCma(client: CmaClient, spec: AgentSpec, settings: ProvisionSettings, signal: AbortSignal, logger: Logger): Promise<CmaHandle> {
  let environmentId = settings.environmentId;
  let environmentName: string | undefined;
  let createdEnvironment = false;
  let createdAgent = false;
  if (environmentId === undefined) {
    const config = { ...settings.environment };
    environmentName = contentAddressedName(settings.environmentName, { config });
    const name = environmentName;
    const ensured = await ensure(
      'environment',
      name,
      () => client.createEnvironment({ name, config }, signal),
      () => client.listEnvironments(signal),
      logger,
    );
    environmentId = ensured.id;
    createdEnvironment = ensured.created;
  }
  let agentId = settings.agentId;
  let agentName: string | undefined;
  if (agentId === undefined) {
    const body = agentBodyOf(spec, settings.model);
    agentName = contentAddressedName(spec.name, body);
    const name = agentName;
    let ensured: { id: string; created: boolean };
    try {
      ensured = await ensure(
        'agent',
        name,
        () => client.createAgent({ name, ...body }, signal),
        () => client.listAgents(signal),
        logger,
      );
    } catch (e) {
      if (!createdEnvironment) throw e;
      throw await rollbackEnvironment(client, environmentId, environmentName!, toAgentRxError(e), settings.rollbackTimeoutMs ?? 30_000, logger);
    }
    agentId = ensured.id;
    createdAgent = ensured.created;
  }
  return {
    agentId,
    environmentId,
    ...(agentName !== undefined ? { agentName } : {}),
    ...(environmentName !== undefined ? { environmentName } : {}),
    provisioned: { agent: createdAgent, environment: createdEnvironment },
  };
}

/**
 * Archives the environment a failed provisioning created and returns the original error, annotated
 * with what the rollback did (never the rollback's error instead of the original one).
 */
async function rollbackEnvironment(
  client: CmaClient,
  id: string,
  name: string,
  original: AgentRxError,
  timeoutMs: number,
  logger: Logger,
): Promise<AgentRxError> {
  try {
    await client.archiveEnvironment(id, AbortSignal.timeout(timeoutMs));
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

/** Creates the named resource, or adopts the active one of that name on a 409; says which. */
async function ensure(
  kind: string,
  name: string,
  create: () => Promise<WireMap>,
  list: () => Promise<WireMap[]>,
  logger: Logger,
): Promise<{ id: string; created: boolean }> {
  try {
    const created = await create();
    if (typeof created['id'] !== 'string') throw new AgentRxError('provider_error', `creating the ${kind} "${name}" answered without an id`);
    return { id: created['id'], created: true };
  } catch (e) {
    if (!isAgentRxError(e, 'http_error') || e.details?.['status'] !== 409) throw e;
    const found = (await list()).find((r) => r['name'] === name && (r['archived_at'] === null || r['archived_at'] === undefined));
    if (!found || typeof found['id'] !== 'string') {
      throw new AgentRxError('http_error', `creating the ${kind} "${name}" answered 409 (it exists), but no active ${kind} of that name was found`, {
        status: 409,
        name,
      });
    }
    logger.debug(`claude-managed-agents: reusing the existing ${kind}`, { name, id: found['id'] });
    return { id: found['id'], created: false };
  }
}
