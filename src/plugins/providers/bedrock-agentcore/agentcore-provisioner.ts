import type { CreateHarnessCommandInput, Harness, HarnessSummary } from '@aws-sdk/client-bedrock-agentcore-control';
import { AgentRxError, isAgentRxError } from '../../../core/errors.js';
import { withRetry } from '../../../core/http/retry.js';
import { sleep } from '../../../core/util/async.js';
import type { Logger } from '../../../core/logger.js';
import type { AgentSpec } from '../../../core/model.js';
import { controlError } from './agentcore-clients.js';
import { harnessCreateInput, harnessNameOf } from './agentcore-harness-input.js';
import { classifyHarnessStatus } from './agentcore-harness-status.js';
import type { AgentCoreControlClientLike, AgentCoreHarnessHandle, AgentCoreProvisionerOptions } from './agentcore-provision-types.js';
import { loadControlSdk, type AgentCoreControlSdk } from './agentcore-sdk.js';

// Status classification is part of this module's surface (tests import it from here).
export { classifyHarnessStatus, type HarnessStatusClass } from './agentcore-harness-status.js';

export type { AgentCoreControlClientLike, AgentCoreHarnessHandle, AgentCoreProvisionerOptions } from './agentcore-provision-types.js';

/** The command classes the provisioner builds. */
type ControlCommands = Pick<AgentCoreControlSdk, 'CreateHarnessCommand' | 'DeleteHarnessCommand' | 'GetHarnessCommand' | 'ListHarnessesCommand'>;

/** A deadline shared by every call of one provisioning. */
class Budget {
  private readonly deadline: number;
  constructor(readonly totalMs: number) {
    this.deadline = Date.now() + totalMs;
  }
  remaining(): number {
    return this.deadline - Date.now();
  }
}

/**
 * Creates, adopts, waits for and deletes AgentCore harnesses through the control plane
 * (`@aws-sdk/client-bedrock-agentcore-control`). Harness names are content-addressed
 * (`<prefix>_<agent name>_<digest8>` of the spec), so a 409 on create means an equivalent
 * harness exists and it is adopted. A harness this call created is deleted again when a later
 * step fails; a failed rollback is logged and recorded in `details.rollbackError`, never thrown
 * instead of the original error. The SDK's command classes are imported at the first call (the
 * SDK is an optional dependency), so building a provisioner does not load it.
 */
export class AgentCoreProvisioner {
  private readonly controlRetries: number;
  private readonly retryBaseMs: number;

  constructor(
    private readonly client: AgentCoreControlClientLike,
    private readonly opts: AgentCoreProvisionerOptions,
    private readonly logger: Logger,
  ) {
    this.controlRetries = opts.controlRetries ?? 2;
    this.retryBaseMs = opts.retryBaseMs ?? 200;
  }

  /** The content-addressed harness name of `spec`: `<prefix>_<agent name>_<digest8>`, within `[a-zA-Z][a-zA-Z0-9_]{0,39}`. */
  harnessName(spec: AgentSpec): string {
    return harnessNameOf(spec, this.opts);
  }

  /** The `CreateHarness` input for `spec`: inline-function tools from the tool declarations; unset knobs omitted. */
  createInput(spec: AgentSpec): CreateHarnessCommandInput {
    return harnessCreateInput(spec, this.opts);
  }

  /**
   * Creates the harness for `spec` (or adopts the existing one on 409) and waits until it is
   * READY, all within `provisionTimeoutMs`. Rejects with `http_error` (a control-plane call
   * failed), `name_conflict` (a 409 and no harness of that name listed), `resource_archived` (a
   * 409 and the harness of that name is stuck in DELETE_FAILED), `provider_error` (failed,
   * terminating or unknown status; a response without ids),
   * `timeout` (budget exhausted) or the abort reason of `signal`.
   */
  async provision(spec: AgentSpec, signal: AbortSignal): Promise<AgentCoreHarnessHandle> {
    const budget = new Budget(this.opts.provisionTimeoutMs);
    const input = this.createInput(spec);
    const name = input.harnessName!;
    for (let round = 0; round < 3; round++) {
      let created: Harness | undefined;
      try {
        created = ((await this.call('CreateHarness', (c) => new c.CreateHarnessCommand(input), false, budget, signal)) as { harness?: Harness }).harness;
      } catch (e) {
        if (!isAgentRxError(e) || e.details?.['status'] !== 409) throw e;
        const adopted = await this.recoverConflict(name, e, budget, signal);
        if (adopted) return adopted;
        continue;
      }
      if (!created?.harnessId || !created.arn) {
        throw new AgentRxError('provider_error', `CreateHarness for ${name} answered without harnessId or arn (unexpected response shape)`, {
          operation: 'CreateHarness',
          harnessName: name,
        });
      }
      this.logger.info(`bedrock-agentcore: created harness ${name}`, { harnessId: created.harnessId, status: created.status });
      try {
        await this.waitReady(created.harnessId, budget, signal);
      } catch (e) {
        throw await this.rollback(created.harnessId, name, toError(e));
      }
      return { harnessArn: created.arn, harnessId: created.harnessId, harnessName: name, created: true };
    }
    throw new AgentRxError('provider_error', `CreateHarness for ${name} kept conflicting with a harness that was being deleted`, { harnessName: name });
  }

  /**
   * Deletes the harness of `handle` if this provisioning created it. A configured ARN and a
   * harness adopted by name (another process may be using it) are left alone. A missing harness
   * counts as deleted.
   */
  async teardown(handle: AgentCoreHarnessHandle, signal: AbortSignal): Promise<void> {
    if (handle.harnessId === undefined || !handle.created) return;
    await this.deleteHarness(handle.harnessId, signal, handle.harnessName);
  }

  /** Deletes one harness by id (within `provisionTimeoutMs`); a missing harness counts as deleted. */
  async deleteHarness(harnessId: string, signal: AbortSignal, name?: string): Promise<void> {
    try {
      await this.call('DeleteHarness', (c) => new c.DeleteHarnessCommand({ harnessId }), true, new Budget(this.opts.provisionTimeoutMs), signal);
      this.logger.info(`bedrock-agentcore: deleted harness ${name ?? harnessId}`, { harnessId });
    } catch (e) {
      if (isAgentRxError(e) && e.details?.['status'] === 404) return;
      throw e;
    }
  }

  /** Every harness of the account and region, reading every page of `ListHarnesses` (within `provisionTimeoutMs`). */
  listHarnesses(signal: AbortSignal): Promise<HarnessSummary[]> {
    return this.listAll(signal, new Budget(this.opts.provisionTimeoutMs));
  }

  private async listAll(signal: AbortSignal, budget: Budget): Promise<HarnessSummary[]> {
    const out: HarnessSummary[] = [];
    const seen = new Set<string>();
    let token: string | undefined;
    for (;;) {
      const page = (await this.call(
        'ListHarnesses',
        (c) => new c.ListHarnessesCommand(token !== undefined ? { nextToken: token } : {}),
        true,
        budget,
        signal,
      )) as {
        harnesses?: HarnessSummary[];
        nextToken?: string;
      };
      out.push(...(page.harnesses ?? []));
      const next = page.nextToken;
      if (next === undefined || next === '' || seen.has(next)) return out;
      seen.add(next);
      token = next;
    }
  }

  /** After a 409: adopt the same-named harness, or wait for a deleting one to go (then undefined: create again). */
  private async recoverConflict(name: string, conflict: AgentRxError, budget: Budget, signal: AbortSignal): Promise<AgentCoreHarnessHandle | undefined> {
    const existing = (await this.listAll(signal, budget)).find((h) => h.harnessName === name);
    if (!existing?.harnessId || !existing.arn) {
      throw new AgentRxError(
        'name_conflict',
        `${conflict.message} (and no harness named ${name} is listed): another account's or tool's harness may hold the name; delete it or change harnessNamePrefix`,
        { ...conflict.details, harnessName: name },
        { cause: conflict },
      );
    }
    if (existing.status === 'DELETE_FAILED') {
      throw new AgentRxError(
        'resource_archived',
        `The existing harness ${name} failed to delete (status DELETE_FAILED) and still holds the name: delete it again (agentrx harnesses prune, or DeleteHarness ${existing.harnessId}) or change the agent`,
        { harnessId: existing.harnessId, harnessName: name, status: existing.status },
      );
    }
    const adopt = (): AgentCoreHarnessHandle => {
      this.logger.info(`bedrock-agentcore: adopted existing harness ${name}`, { harnessId: existing.harnessId });
      return { harnessArn: existing.arn!, harnessId: existing.harnessId, harnessName: name, created: false };
    };
    switch (classifyHarnessStatus(existing.status)) {
      case 'ready':
        return adopt();
      case 'waiting':
        await this.waitReady(existing.harnessId, budget, signal);
        return adopt();
      case 'terminating':
        await this.waitGone(existing.harnessId, budget, signal);
        return undefined;
      case 'failed':
        throw new AgentRxError('provider_error', `The existing harness ${name} is in status ${String(existing.status)}: delete it or change the agent`, {
          harnessId: existing.harnessId,
          status: existing.status,
        });
      default:
        throw new AgentRxError('provider_error', `The existing harness ${name} reported an unknown status '${String(existing.status)}'`, {
          harnessId: existing.harnessId,
          status: existing.status,
        });
    }
  }

  /** Polls `GetHarness` until READY; fails on terminating, failed or unknown statuses, or when the budget runs out. */
  private async waitReady(harnessId: string, budget: Budget, signal: AbortSignal): Promise<Harness> {
    for (;;) {
      const h = ((await this.call('GetHarness', (c) => new c.GetHarnessCommand({ harnessId }), true, budget, signal)) as { harness?: Harness }).harness;
      const status = h?.status;
      switch (classifyHarnessStatus(status)) {
        case 'ready':
          return h!;
        case 'waiting':
          break;
        case 'terminating':
          throw new AgentRxError('provider_error', `Harness ${harnessId} is being deleted (status ${String(status)}) while waiting for it to be READY`, {
            harnessId,
            status,
          });
        case 'failed': {
          const reason = typeof h?.failureReason === 'string' && h.failureReason !== '' ? `: ${h.failureReason}` : '';
          throw new AgentRxError('provider_error', `Harness ${harnessId} failed with status ${String(status)}${reason}`, {
            harnessId,
            status,
            failureReason: h?.failureReason,
          });
        }
        default:
          throw new AgentRxError('provider_error', `Harness ${harnessId} reported an unknown status '${String(status)}'`, { harnessId, status });
      }
      if (budget.remaining() <= this.opts.pollIntervalMs) {
        throw new AgentRxError(
          'timeout',
          `Harness ${harnessId} was not READY within the provisioning budget of ${budget.totalMs} ms (last status ${String(status)})`,
          {
            harnessId,
            status,
            provisionTimeoutMs: budget.totalMs,
          },
        );
      }
      await sleep(this.opts.pollIntervalMs, signal);
    }
  }

  /** Polls `GetHarness` until 404 (the deleting harness is gone). */
  private async waitGone(harnessId: string, budget: Budget, signal: AbortSignal): Promise<void> {
    for (;;) {
      let status: unknown;
      try {
        status = ((await this.call('GetHarness', (c) => new c.GetHarnessCommand({ harnessId }), true, budget, signal)) as { harness?: Harness }).harness
          ?.status;
      } catch (e) {
        if (isAgentRxError(e) && e.details?.['status'] === 404) return;
        throw e;
      }
      if (classifyHarnessStatus(status) !== 'terminating') {
        throw new AgentRxError('provider_error', `Harness ${harnessId} left DELETING for status '${String(status)}' while waiting for it to disappear`, {
          harnessId,
          status,
        });
      }
      if (budget.remaining() <= this.opts.pollIntervalMs) {
        throw new AgentRxError('timeout', `Harness ${harnessId} was still DELETING when the provisioning budget of ${budget.totalMs} ms ran out`, {
          harnessId,
        });
      }
      await sleep(this.opts.pollIntervalMs, signal);
    }
  }

  /** Deletes a harness this call created; returns the original error, annotated, whatever the rollback did. */
  private async rollback(harnessId: string, name: string, original: AgentRxError): Promise<AgentRxError> {
    const ms = this.opts.rollbackTimeoutMs ?? 30_000;
    try {
      // Its own signal: a cancelled provisioning still cleans up what it created.
      await this.call('DeleteHarness', (c) => new c.DeleteHarnessCommand({ harnessId }), true, new Budget(ms), AbortSignal.timeout(ms));
      this.logger.warn(`bedrock-agentcore: provisioning failed, deleted the harness it created (${name})`, { harnessId, error: original.message });
      return new AgentRxError(original.code, original.message, { ...original.details, rolledBack: true }, { cause: original });
    } catch (e) {
      const why = toError(e).message;
      this.logger.warn(`bedrock-agentcore: provisioning failed and the rollback delete of ${name} failed too`, {
        harnessId,
        error: original.message,
        rollbackError: why,
      });
      return new AgentRxError(original.code, original.message, { ...original.details, rolledBack: false, rollbackError: why }, { cause: original });
    }
  }

  /**
   * One control-plane call, bounded to its share of the remaining budget (remaining ÷ attempts
   * left, at least 1 ms); idempotent calls are retried on transient failures.
   */
  private async call(
    operation: string,
    command: (sdk: ControlCommands) => Parameters<AgentCoreControlClientLike['send']>[0],
    retryable: boolean,
    budget: Budget,
    signal: AbortSignal,
  ): Promise<unknown> {
    const attempts = retryable ? this.controlRetries + 1 : 1;
    const sdk = await (this.opts.sdk ?? loadControlSdk)();
    return withRetry(
      async (attempt) => {
        const remaining = budget.remaining();
        if (remaining <= 0) {
          throw new AgentRxError('timeout', `${operation}: the provisioning budget of ${budget.totalMs} ms ran out`, {
            operation,
            provisionTimeoutMs: budget.totalMs,
            transient: false,
          });
        }
        const share = Math.max(1, Math.floor(remaining / (attempts - attempt)));
        const timer = AbortSignal.timeout(share);
        try {
          return await this.client.send(command(sdk), { abortSignal: AbortSignal.any([signal, timer]) });
        } catch (e) {
          if (!signal.aborted && timer.aborted) {
            throw new AgentRxError('timeout', `${operation} did not answer within ${share} ms (its share of the provisioning budget)`, {
              operation,
              provisionTimeoutMs: budget.totalMs,
              transient: true,
            });
          }
          throw controlError(operation, e);
        }
      },
      {
        maxRetries: attempts - 1,
        baseMs: this.retryBaseMs,
        signal,
        onRetry: (info) =>
          this.logger.warn(`bedrock-agentcore: ${operation} failed transiently, retry ${info.retry}/${info.maxRetries} in ${info.delayMs} ms`, {
            error: toError(info.error).message,
          }),
      },
    );
  }
}

function toError(e: unknown): AgentRxError {
  return e instanceof AgentRxError ? e : controlError('provisioning', e);
}
