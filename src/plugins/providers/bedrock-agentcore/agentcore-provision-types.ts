import type { CreateHarnessCommand, DeleteHarnessCommand, GetHarnessCommand, ListHarnessesCommand } from '@aws-sdk/client-bedrock-agentcore-control';
import type { AgentCoreControlSdk } from './agentcore-sdk.js';

/** The shapes `AgentCoreProvisioner` takes and returns (re-exported from `agentcore-provisioner.ts`). */

/** What `provision` returns and `open`/`teardown` consume. */
export interface AgentCoreHarnessHandle {
  /** The harness to invoke. */
  readonly harnessArn: string;
  /** Set when the harness came from the control plane (created or adopted by name); `teardown` deletes it only when `created`. */
  readonly harnessId?: string;
  /** The harness name, when it came from the control plane. */
  readonly harnessName?: string;
  /** True when this provisioning call created the harness; false when it adopted one or used a configured ARN. */
  readonly created: boolean;
  /** The full hex digest of the harness's version (set when it was provisioned from a spec or resolved from a tag). */
  readonly digest?: string;
}

/** The part of the control-plane client the provisioner uses (the official SDK client satisfies it). */
export interface AgentCoreControlClientLike {
  /** Sends one command; rejects with the SDK's error. `abortSignal` aborts the request. */
  send(
    command: CreateHarnessCommand | GetHarnessCommand | ListHarnessesCommand | DeleteHarnessCommand,
    options?: { abortSignal?: AbortSignal },
  ): Promise<unknown>;
}

/** Provisioning settings (from `AgentCoreProviderOptions`). */
export interface AgentCoreProvisionerOptions {
  /** IAM role the harness runs as. */
  readonly executionRoleArn: string;
  /** Prefix of the content-addressed harness names. */
  readonly harnessNamePrefix: string;
  /** One budget for the whole `provision` call (create, 409 recovery, ready-wait). */
  readonly provisionTimeoutMs: number;
  /** Interval between two `GetHarness` polls of a wait, in ms. */
  readonly pollIntervalMs: number;
  /** `environment` of `CreateHarness`, verbatim. */
  readonly environment?: Readonly<Record<string, unknown>>;
  /** `environmentVariables` of `CreateHarness`. */
  readonly environmentVariables?: Readonly<Record<string, string>>;
  /** Retries of idempotent calls (Get, List, Delete) after a transient failure. Default 2. Create is never retried. */
  readonly controlRetries?: number;
  /** Backoff base of those retries in ms. Default 200. */
  readonly retryBaseMs?: number;
  /** Budget of the rollback delete after a failed create, in ms. Default 30 000. */
  readonly rollbackTimeoutMs?: number;
  /** The control-plane SDK (its command classes). Default: imported on the first call (`loadControlSdk`). */
  readonly sdk?: () => Promise<Pick<AgentCoreControlSdk, 'CreateHarnessCommand' | 'DeleteHarnessCommand' | 'GetHarnessCommand' | 'ListHarnessesCommand'>>;
}
