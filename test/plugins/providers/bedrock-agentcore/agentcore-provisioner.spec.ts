import { MemoryLogger } from '../../../../src/core/logger.js';
import type { AgentSpec } from '../../../../src/core/model.js';
import { AgentCoreProvisioner, classifyHarnessStatus } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore-provisioner.js';
import { createControlClient } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore-clients.js';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../../../src/testing/agentcore-emulator.js';
import type { AgentCoreControlOptions } from '../../../../src/testing/agentcore-emulator/control-plane.js';
import { CREDS, SPEC, makeProvider, options } from './helpers.js';

const ROLE = 'arn:aws:iam::123456789012:role/agentcore-exec';

describe('AgentCoreProvisioner', () => {
  let emulator: AgentCoreEmulator;
  let logger: MemoryLogger;
  let destroy: (() => void) | undefined;

  async function setup(control: AgentCoreControlOptions, extra: Record<string, unknown> = {}): Promise<AgentCoreProvisioner> {
    emulator = await startAgentCoreEmulator({ credentials: CREDS, control });
    const o = options({ controlEndpoint: emulator.baseUrl, region: 'eu-west-1', accessKeyId: CREDS.accessKeyId, secretAccessKey: CREDS.secretAccessKey });
    const client = await createControlClient(o);
    destroy = () => client.destroy();
    logger = new MemoryLogger();
    return new AgentCoreProvisioner(
      client,
      // A budget no loaded machine exhausts: each call gets its share of it (a short one would time out and be retried).
      { executionRoleArn: ROLE, harnessNamePrefix: 'agentrx', provisionTimeoutMs: 60_000, pollIntervalMs: 1, retryBaseMs: 1, ...extra },
      logger,
    );
  }

  /** The harness name of `SPEC` under the default prefix (no network). */
  const nameOf = (spec: AgentSpec): string =>
    new AgentCoreProvisioner(
      { send: () => Promise.reject(new Error('offline')) },
      { executionRoleArn: ROLE, harnessNamePrefix: 'agentrx', provisionTimeoutMs: 1, pollIntervalMs: 1 },
      new MemoryLogger(),
    ).harnessName(spec);
  const ops = (): string[] => emulator.requests.map((r) => r.operation);
  const signal = (): AbortSignal => new AbortController().signal;

  afterEach(async () => {
    destroy?.();
    await emulator?.close();
  });

  describe('.harnessName', () => {
    it('should be content-addressed and fit [a-zA-Z][a-zA-Z0-9_]{0,39}', async () => {
      const p = await setup({});
      const long: AgentSpec = { ...SPEC, name: 'a-very-long-agent-name-with-dashes-and-more-words' };
      for (const spec of [SPEC, long]) expect(p.harnessName(spec)).toMatch(/^agentrx_[a-zA-Z0-9_]*_[0-9a-f]{8}$/);
      expect(p.harnessName(long).length).toBeLessThanOrEqual(40);
      expect(p.harnessName(SPEC)).toBe(p.harnessName({ ...SPEC }));
      expect(p.harnessName(SPEC)).not.toBe(p.harnessName({ ...SPEC, systemPrompt: 'Different.' }));
    });
  });

  describe('.provision', () => {
    describe('when the harness goes CREATING → CREATING → READY', () => {
      it('should create it with inline-function tools and wait until it is READY', async () => {
        const p = await setup({ statusSequence: ['CREATING', 'CREATING', 'READY'] });
        const handle = await p.provision({ ...SPEC, model: 'us.anthropic.claude-test' }, signal());
        expect(ops()).toEqual(['CreateHarness', 'GetHarness', 'GetHarness', 'GetHarness']);
        expect(handle).toMatchObject({ created: true, harnessName: p.harnessName({ ...SPEC, model: 'us.anthropic.claude-test' }) });
        expect(handle.harnessArn).toBe(emulator.harnesses()[0]!.arn);
        const body = emulator.requests[0]!.body as Record<string, unknown>;
        expect(body).toMatchObject({
          executionRoleArn: ROLE,
          systemPrompt: [{ text: 'Be brief.' }],
          model: { bedrockModelConfig: { modelId: 'us.anthropic.claude-test' } },
        });
        expect(body['tools']).toEqual(
          SPEC.tools.map((t) => ({
            type: 'inline_function',
            name: t.name,
            config: { inlineFunction: { description: t.description, inputSchema: t.inputSchema } },
          })),
        );
      });
    });

    describe('when a harness with the same name already exists (409)', () => {
      it('should adopt a READY one without creating or deleting anything', async () => {
        const name = nameOf(SPEC);
        const p = await setup({ pageSize: 1, harnesses: [{ harnessName: 'someone_else' }, { harnessName: name }] });
        const handle = await p.provision(SPEC, signal());
        expect(handle).toMatchObject({ created: false, harnessName: name, harnessArn: emulator.harnesses()[1]!.arn });
        expect(ops()).toEqual(['CreateHarness', 'ListHarnesses', 'ListHarnesses']);
        expect(emulator.harnesses()).toHaveLength(2);
      });

      it('should wait for a CREATING one to become READY, then adopt it', async () => {
        const name = nameOf(SPEC);
        const p = await setup({ harnesses: [{ harnessName: name, statuses: ['CREATING', 'READY'] }] });
        const handle = await p.provision(SPEC, signal());
        expect(handle.created).toBe(false);
        expect(ops()).toEqual(['CreateHarness', 'ListHarnesses', 'GetHarness', 'GetHarness']);
      });

      it('should wait for a DELETING one to disappear, then create a new one', async () => {
        const name = nameOf(SPEC);
        const p = await setup({ harnesses: [{ harnessName: name, statuses: ['DELETING'], disappearsAfterGets: 1 }] });
        const handle = await p.provision(SPEC, signal());
        expect(handle.created).toBe(true);
        expect(ops()).toEqual(['CreateHarness', 'ListHarnesses', 'GetHarness', 'GetHarness', 'CreateHarness', 'GetHarness', 'GetHarness']);
      });

      it('should refuse a FAILED one', async () => {
        const name = nameOf(SPEC);
        const p = await setup({ harnesses: [{ harnessName: name, statuses: ['CREATE_FAILED'] }] });
        await expect(p.provision(SPEC, signal())).rejects.toMatchObject({ code: 'provider_error', message: expect.stringContaining('CREATE_FAILED') });
      });
    });

    describe('when the created harness fails', () => {
      it('should roll it back and report the failure reason', async () => {
        const p = await setup({ statusSequence: ['CREATING', 'CREATE_FAILED'], failureReason: 'role cannot be assumed' });
        const err = await p.provision(SPEC, signal()).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'provider_error', message: expect.stringContaining('role cannot be assumed'), details: { rolledBack: true } });
        expect(ops()).toEqual(['CreateHarness', 'GetHarness', 'GetHarness', 'DeleteHarness']);
        expect(emulator.harnesses()).toHaveLength(0);
      });

      it('should keep the original error when the rollback fails too', async () => {
        const fault = { status: 500 };
        const p = await setup({ statusSequence: ['CREATE_FAILED'], faults: { delete: [fault, fault, fault] } });
        const err = await p.provision(SPEC, signal()).catch((e: unknown) => e);
        expect(err).toMatchObject({
          code: 'provider_error',
          message: expect.stringContaining('CREATE_FAILED'),
          details: { rolledBack: false, rollbackError: expect.stringContaining('HTTP 500') },
        });
        expect(ops().filter((o) => o === 'DeleteHarness')).toHaveLength(3);
        expect(logger.lines.some((l) => l.level === 'warn' && l.message.includes('rollback delete'))).toBe(true);
      });

      it('should treat an unknown status as fatal and roll back', async () => {
        const p = await setup({ statusSequence: ['CREATING', 'MYSTERY'] });
        await expect(p.provision(SPEC, signal())).rejects.toMatchObject({
          code: 'provider_error',
          message: expect.stringContaining("unknown status 'MYSTERY'"),
        });
        expect(emulator.harnesses()).toHaveLength(0);
      });

      it('should stop at DELETING (terminating) and roll back', async () => {
        const p = await setup({ statusSequence: ['DELETING'] });
        await expect(p.provision(SPEC, signal())).rejects.toMatchObject({ code: 'provider_error', message: expect.stringContaining('being deleted') });
        expect(ops().at(-1)).toBe('DeleteHarness');
      });
    });

    describe('when the harness is not READY within the budget', () => {
      it('should fail with timeout and roll back', async () => {
        // Long enough for the create to answer on a loaded machine; then the harness stays CREATING until the budget ends.
        const p = await setup({ statusSequence: ['CREATING'] }, { provisionTimeoutMs: 3_000, pollIntervalMs: 10 });
        await expect(p.provision(SPEC, signal())).rejects.toMatchObject({ code: 'timeout', details: { rolledBack: true, provisionTimeoutMs: 3_000 } });
        expect(emulator.harnesses()).toHaveLength(0);
      });
    });

    describe('when CreateHarness answers 500', () => {
      it('should not retry the create', async () => {
        const p = await setup({ faults: { create: [{ status: 500 }] } });
        await expect(p.provision(SPEC, signal())).rejects.toMatchObject({ code: 'http_error', details: { status: 500, operation: 'CreateHarness' } });
        expect(ops()).toEqual(['CreateHarness']);
      });
    });

    describe('when GetHarness answers 503 once', () => {
      it('should retry the poll', async () => {
        const p = await setup({ statusSequence: ['READY'], faults: { get: [{ status: 503 }] } });
        await expect(p.provision(SPEC, signal())).resolves.toMatchObject({ created: true });
        expect(ops()).toEqual(['CreateHarness', 'GetHarness', 'GetHarness']);
      });
    });
  });

  describe('.listHarnesses', () => {
    it('should read every page', async () => {
      const p = await setup({ pageSize: 2, harnesses: ['h1', 'h2', 'h3', 'h4', 'h5'].map((harnessName) => ({ harnessName })) });
      const all = await p.listHarnesses(signal());
      expect(all.map((h) => h.harnessName)).toEqual(['h1', 'h2', 'h3', 'h4', 'h5']);
      expect(ops()).toEqual(['ListHarnesses', 'ListHarnesses', 'ListHarnesses']);
      expect(emulator.requests.map((r) => r.query['nextToken'])).toEqual([undefined, 'page-2', 'page-4']);
    });
  });

  describe('.teardown', () => {
    it('should delete the harness and accept one that is already gone', async () => {
      const p = await setup({ harnesses: [{ harnessName: 'mine', harnessId: 'mine-1' }] });
      await p.teardown({ harnessArn: 'arn:x', harnessId: 'mine-1', created: true }, signal());
      expect(emulator.harnesses()).toHaveLength(0);
      await expect(p.teardown({ harnessArn: 'arn:x', harnessId: 'mine-1', created: true }, signal())).resolves.toBeUndefined();
    });

    it('should leave a harness it adopted by name alone', async () => {
      const p = await setup({ harnesses: [{ harnessName: 'theirs', harnessId: 'theirs-1' }] });
      await p.teardown({ harnessArn: 'arn:x', harnessId: 'theirs-1', harnessName: 'theirs', created: false }, signal());
      expect(emulator.harnesses()).toHaveLength(1);
    });
  });
});

describe('classifyHarnessStatus', () => {
  it('should classify every documented status', () => {
    expect(
      ['READY', 'CREATING', 'UPDATING', 'DELETING', 'CREATE_FAILED', 'UPDATE_FAILED', 'DELETE_FAILED', 'WHAT', undefined].map(classifyHarnessStatus),
    ).toEqual(['ready', 'waiting', 'waiting', 'terminating', 'failed', 'failed', 'failed', 'unknown', 'unknown']);
  });
});

describe('AgentCoreAgentProvider provisioning', () => {
  let emulator: AgentCoreEmulator;
  afterEach(async () => emulator?.close());

  it('should use a configured harnessArn without any control-plane call', async () => {
    emulator = await startAgentCoreEmulator({ credentials: CREDS });
    const { provider } = makeProvider(emulator);
    await expect(provider.provision(SPEC, new AbortController().signal)).resolves.toMatchObject({
      created: false,
      harnessArn: expect.stringContaining('harness/test-harness'),
    });
    await provider.teardown({ harnessArn: 'arn:aws:bedrock-agentcore:eu-west-1:1:harness/x', created: false }, new AbortController().signal);
    expect(emulator.requests).toHaveLength(0);
  });

  it('should fail with invalid_config without harnessArn or executionRoleArn', async () => {
    emulator = await startAgentCoreEmulator({ credentials: CREDS });
    const { provider } = makeProvider(emulator, { harnessArn: undefined });
    await expect(provider.provision(SPEC, new AbortController().signal)).rejects.toMatchObject({
      code: 'invalid_config',
      message: expect.stringContaining('executionRoleArn'),
    });
  });

  it('should provision through the control plane and tear the harness down', async () => {
    emulator = await startAgentCoreEmulator({ credentials: CREDS });
    const { provider } = makeProvider(emulator, { harnessArn: undefined, executionRoleArn: ROLE, pollIntervalMs: 1 });
    const handle = await provider.provision(SPEC, new AbortController().signal);
    expect(handle.created).toBe(true);
    expect(emulator.harnesses()).toHaveLength(1);
    await provider.teardown(handle, new AbortController().signal);
    expect(emulator.harnesses()).toHaveLength(0);
    provider.stop();
  });
});
