import { createHash } from 'node:crypto';
import type { InvokeHarnessCommandInput } from '@aws-sdk/client-bedrock-agentcore';
import type { CreateHarnessCommandInput, HarnessTool } from '@aws-sdk/client-bedrock-agentcore-control';
import type { AgentCoreConn, AgentCoreInput } from './agentcore.provider.js';
import type { AgentCoreProviderOptions } from './agentcore.config.js';
import { AgentRxError } from '../../../core/errors.js';
import type { AgentSpec, RunSettings } from '../../../core/model.js';
import type { OpenOptions } from '../../../core/plugin/agent-provider.js';
import { agentCoreNameOf } from './agentcore-names.js';
import type { AgentCoreProvisionerOptions } from './agentcore-provisioner.js';

/**
 * What the control plane is asked to create for a spec: the content-addressed harness name and
 * the `CreateHarness` input. Pure. The name hashes everything that shapes the harness, so a 409 on
 * create means an equivalent harness exists and a changed spec or setting never adopts a stale one.
 */

/** The provisioner settings that shape a harness (and therefore its name). */
export type HarnessInputOptions = Pick<AgentCoreProvisionerOptions, 'executionRoleArn' | 'harnessNamePrefix' | 'environment' | 'environmentVariables'>;

/** The SDK's JSON document type (tool input schemas). */
type Document = NonNullable<NonNullable<HarnessTool['config']>['inlineFunction']>['inputSchema'];

/** The full lowercase hex SHA-256 of everything that shapes the harness of `spec` (its version's digest). */
export function harnessDigestOf(spec: AgentSpec, opts: HarnessInputOptions): string {
  return createHash('sha256')
    .update(stableJson(identity(spec, opts)))
    .digest('hex');
}

/**
 * The content-addressed harness name of `spec`: `<prefix>_<agent name>_<digest8>` under the
 * AgentCore name policy (`agentCoreNameOf`: `[a-zA-Z][a-zA-Z0-9_]{0,39}`, a long name cut and
 * followed by a short hash of it).
 */
export function harnessNameOf(spec: AgentSpec, opts: HarnessInputOptions): string {
  return agentCoreNameOf(opts.harnessNamePrefix, spec.name, harnessDigestOf(spec, opts));
}

/** The `CreateHarness` input for `spec`: inline-function tools from the tool declarations; unset knobs omitted. */
export function harnessCreateInput(spec: AgentSpec, opts: HarnessInputOptions): CreateHarnessCommandInput {
  return {
    harnessName: harnessNameOf(spec, opts),
    executionRoleArn: opts.executionRoleArn,
    ...(spec.systemPrompt !== undefined && spec.systemPrompt !== '' ? { systemPrompt: [{ text: spec.systemPrompt }] } : {}),
    ...(spec.model !== undefined ? { model: { bedrockModelConfig: { modelId: spec.model } } } : {}),
    ...(spec.tools.length > 0
      ? {
          tools: spec.tools.map((t): HarnessTool => ({
            type: 'inline_function',
            name: t.name,
            config: { inlineFunction: { description: t.description, inputSchema: t.inputSchema as Document } },
          })),
        }
      : {}),
    ...(isHarnessEnvironment(opts.environment) ? { environment: opts.environment } : {}),
    ...(opts.environmentVariables !== undefined ? { environmentVariables: { ...opts.environmentVariables } } : {}),
  };
}

/** Everything that shapes the harness: what the name's digest covers. */
function identity(spec: AgentSpec, opts: HarnessInputOptions): unknown {
  return {
    name: spec.name,
    model: spec.model ?? null,
    systemPrompt: spec.systemPrompt ?? null,
    tools: spec.tools,
    executionRoleArn: opts.executionRoleArn,
    environment: opts.environment ?? null,
    environmentVariables: opts.environmentVariables ?? null,
  };
}

/** JSON with object keys sorted, so equal specs hash equally. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * The config's `environment` goes to `CreateHarness` verbatim: its shape is the harness API's to
 * check (a wrong one is answered with a 4xx naming it), so any object passes here.
 */
function isHarnessEnvironment(env: unknown): env is NonNullable<CreateHarnessCommandInput['environment']> {
  return typeof env === 'object' && env !== null;
}

/**
 * The `InvokeHarness` input of one turn of `conn`: the delta `input`, and the invoke knobs the
 * session's settings and the options set (unset ones omitted).
 */
export function invokeInput(o: AgentCoreProviderOptions, conn: AgentCoreConn, input: AgentCoreInput): InvokeHarnessCommandInput {
  // The session's settings win over the config's; sampling goes inside the model configuration.
  const s = conn.settings;
  const sampling = { ...(s.temperature !== undefined ? { temperature: s.temperature } : {}), ...(s.topP !== undefined ? { topP: s.topP } : {}) };
  const modelId = s.model ?? o.model ?? (Object.keys(sampling).length > 0 ? conn.modelId : undefined);
  const maxTokens = s.maxOutputTokens ?? o.maxTokens;
  return {
    harnessArn: conn.harnessArn,
    runtimeSessionId: conn.sessionId,
    messages: [...input.messages],
    ...(o.qualifier !== undefined ? { qualifier: o.qualifier } : {}),
    ...(o.runtimeUserId !== undefined ? { runtimeUserId: o.runtimeUserId } : {}),
    ...(modelId !== undefined ? { model: { bedrockModelConfig: { modelId, ...sampling } } } : {}),
    ...(s.instructions !== undefined ? { systemPrompt: [{ text: s.instructions }] } : {}),
    ...(o.maxIterations !== undefined ? { maxIterations: o.maxIterations } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(o.timeoutSeconds !== undefined ? { timeoutSeconds: o.timeoutSeconds } : {}),
  };
}

/**
 * The session's settings and the model id its sampling goes with (the session's, the config's,
 * else the spec's); `invalid_options` when sampling is set and no model id is known.
 */
export function sessionSettingsOf(opts: OpenOptions, o: AgentCoreProviderOptions): { settings: RunSettings; modelId: string | undefined } {
  const settings = opts.settings ?? {};
  const modelId = settings.model ?? o.model ?? opts.spec.model;
  if (modelId === undefined && (settings.temperature !== undefined || settings.topP !== undefined)) {
    throw new AgentRxError(
      'invalid_options',
      'bedrock-agentcore: temperature and topP go with a model id (bedrockModelConfig), and none is known: set the session option model, providers.bedrock-agentcore.model or agent.model',
    );
  }
  return { settings, modelId };
}
