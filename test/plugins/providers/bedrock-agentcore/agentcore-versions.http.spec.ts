import { MemoryLogger } from '../../../../src/core/logger.js';
import type { AgentSpec } from '../../../../src/core/model.js';
import type { ProvisionStore } from '../../../../src/core/provision/provision-store.js';
import { MemoryProvisionStore } from '../../../../src/core/store/memory/memory-provision-store.js';
import { harnessNameOf } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore-harness-input.js';
import { AgentCoreAgentProvider } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore.provider.js';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../../../src/testing/agentcore-emulator.js';
import type { AgentCoreControlOptions } from '../../../../src/testing/agentcore-emulator/control-plane.js';
import { failure } from '../../../fakes/failure.js';
import { describeEachStore, ThrowingProvisionStore } from '../provision-stores.js';
import { CREDS, SPEC, emulatorOptions } from './helpers.js';

const ROLE = 'arn:aws:iam::123456789012:role/agentcore-exec';
const version = (n: number): AgentSpec => ({ ...SPEC, systemPrompt: `Prompt ${n}.` });
const signal = (): AbortSignal => new AbortController().signal;
const nameOf = (spec: AgentSpec): string => harnessNameOf(spec, { executionRoleArn: ROLE, harnessNamePrefix: 'agentrx' });

describe('AgentCoreAgentProvider versioned provisioning', () => {
  let emulator: AgentCoreEmulator | undefined;
  let logger: MemoryLogger;
  const providers: AgentCoreAgentProvider[] = [];
  const stores: ProvisionStore[] = [];
  beforeEach(() => (logger = new MemoryLogger()));
  afterEach(async () => {
    for (const p of providers.splice(0)) p.stop();
    for (const s of stores.splice(0)) await s.close?.();
    await emulator?.close();
    emulator = undefined;
  });

  async function start(control: AgentCoreControlOptions = {}): Promise<AgentCoreEmulator> {
    emulator = await startAgentCoreEmulator({ credentials: CREDS, control });
    return emulator;
  }

  function provider(e: AgentCoreEmulator, store: ProvisionStore | undefined, extra: Record<string, unknown> = {}): AgentCoreAgentProvider {
    if (store) stores.push(store);
    const p = new AgentCoreAgentProvider(emulatorOptions(e, { harnessArn: undefined, executionRoleArn: ROLE, pollIntervalMs: 1, ...extra }), logger, store);
    providers.push(p);
    return p;
  }

  const ops = (e: AgentCoreEmulator): string[] => e.requests.map((r) => r.operation);

  describeEachStore((kind) => {
    describe('.provision, then again from a second process sharing the store', () => {
      it('should create the harness once and answer the second from the store without a control-plane call', async () => {
        const e = await start();
        const store = await kind.open();
        const first = await provider(e, store).provision(SPEC, signal());
        expect(first).toMatchObject({ created: true, harnessName: nameOf(SPEC), digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
        const before = e.requests.length;
        const second = await provider(e, store).provision(SPEC, signal());
        expect(e.requests.length).toBe(before);
        expect(second).toEqual({ ...first, created: false });
        const ensured = await provider(e, store).ensureHarness(SPEC, signal());
        expect(ensured).toEqual({ handle: second, digest: first.digest, created: false });
      });
    });

    describe('tags', () => {
      it('should tag a version, resolve harness: "helper:prod" to it, and refuse an unknown tag', async () => {
        const e = await start();
        const store = await kind.open();
        const p = provider(e, store);
        const v1 = await p.ensureHarness(version(1), signal());
        await p.ensureHarness(version(2), signal());
        await p.versioned().tag('harness', 'helper', 'prod', v1.digest.slice(0, 10));
        const handle = await provider(e, store, { harness: 'helper:prod' }).provision(version(3), signal());
        expect(handle).toEqual({ ...v1.handle, created: false });
        expect(e.harnesses()).toHaveLength(2);
        const before = e.requests.length;
        const err = await failure(provider(e, store, { harness: 'helper:canary' }).provision(SPEC, signal()));
        expect(err).toMatchObject({ code: 'unknown_tag' });
        expect(e.requests.length).toBe(before);
      });
    });

    describe('.prune', () => {
      it('should keep the newest and the tagged harnesses, delete the rest oldest first, and leave a DELETING one alone', async () => {
        const deleting = `${nameOf(SPEC).slice(0, -8)}0badcafe`;
        const e = await start({ harnesses: [{ harnessName: deleting, statuses: ['DELETING'] }] });
        const store = await kind.open();
        const p = provider(e, store);
        const vs = [];
        for (let n = 1; n <= 4; n++) vs.push(await p.ensureHarness(version(n), signal()));
        await p.versioned().tag('harness', 'helper', 'prod', vs[0]!.digest);
        const listed = await p.versioned().list('harness', 'helper', signal());
        expect(listed.map((v) => [v.name, v.archived, v.tags])).toEqual([
          [vs[3]!.handle.harnessName, false, []],
          [vs[2]!.handle.harnessName, false, []],
          [vs[1]!.handle.harnessName, false, []],
          [vs[0]!.handle.harnessName, false, ['prod']],
          [deleting, true, []],
        ]);
        const dry = await p.versioned().prune('harness', 'helper', { keep: 1, dryRun: true }, signal());
        expect(dry.archived.map((v) => v.id)).toEqual([vs[1]!.handle.harnessId, vs[2]!.handle.harnessId]);
        expect(ops(e)).not.toContain('DeleteHarness');
        const report = await p.versioned().prune('harness', 'helper', { keep: 1 }, signal());
        expect(report.failed).toBeUndefined();
        expect(report.archived.map((v) => v.id)).toEqual([vs[1]!.handle.harnessId, vs[2]!.handle.harnessId]);
        expect(
          e
            .harnesses()
            .map((h) => h.harnessName)
            .sort(),
        ).toEqual([deleting, vs[0]!.handle.harnessName, vs[3]!.handle.harnessName].sort());
        expect(await store.get({ provider: 'bedrock-agentcore', kind: 'harness', digest: vs[1]!.digest })).toBeUndefined();
      });

      it('should stop at a delete the control plane refuses and report what it deleted before', async () => {
        const e = await start({ faults: { deleteOf: { [nameOf(version(2))]: { status: 403 } } } });
        const store = await kind.open();
        const p = provider(e, store);
        const vs = [];
        for (let n = 1; n <= 4; n++) vs.push(await p.ensureHarness(version(n), signal()));
        const report = await p.versioned().prune('harness', 'helper', { keep: 1 }, signal());
        expect(report.archived.map((v) => v.id)).toEqual([vs[0]!.handle.harnessId]);
        expect(report.failed).toMatchObject({ version: { id: vs[1]!.handle.harnessId }, error: { code: 'http_error' } });
        expect(await store.get({ provider: 'bedrock-agentcore', kind: 'harness', digest: vs[1]!.digest })).toBeDefined();
        expect(e.harnesses()).toHaveLength(3);
      });
    });

    describe('.teardown', () => {
      it('should evict the harness only once the control plane deleted it', async () => {
        const e = await start({ faults: { delete: [{ status: 403 }] } });
        const store = await kind.open();
        const p = provider(e, store);
        const handle = await p.provision(SPEC, signal());
        const key = { provider: 'bedrock-agentcore', kind: 'harness', digest: handle.digest! };
        await expect(p.teardown(handle, signal())).rejects.toMatchObject({ code: 'http_error' });
        expect(await store.get(key)).toBeDefined();
        await p.teardown(handle, signal());
        expect(await store.get(key)).toBeUndefined();
        expect(e.harnesses()).toHaveLength(0);
      });
    });
  });

  describe('409 recovery by exact name', () => {
    it('should adopt a live harness of that name', async () => {
      const e = await start();
      const first = await provider(e, new MemoryProvisionStore()).ensureHarness(SPEC, signal());
      const again = await provider(e, new MemoryProvisionStore()).ensureHarness(SPEC, signal());
      expect(again).toEqual({ handle: { ...first.handle, created: false }, digest: first.digest, created: false });
      expect(e.harnesses()).toHaveLength(1);
    });

    it('should fail with resource_archived when the harness of that name is stuck in DELETE_FAILED', async () => {
      const e = await start({ harnesses: [{ harnessName: nameOf(SPEC), statuses: ['DELETE_FAILED'] }] });
      const err = await failure(provider(e, new MemoryProvisionStore()).ensureHarness(SPEC, signal()));
      expect(err).toMatchObject({ code: 'resource_archived', details: { harnessName: nameOf(SPEC), status: 'DELETE_FAILED' } });
    });

    it('should fail with name_conflict when no harness of that name is listed', async () => {
      const e = await start({ faults: { create: [{ status: 409 }] } });
      const err = await failure(provider(e, new MemoryProvisionStore()).ensureHarness(SPEC, signal()));
      expect(err).toMatchObject({ code: 'name_conflict', details: { harnessName: nameOf(SPEC) } });
      expect(ops(e)).toEqual(['CreateHarness', 'ListHarnesses']);
    });
  });

  describe('with a store that throws', () => {
    it('should provision as on a miss (logged at warn) and still delete on the control plane', async () => {
      const e = await start();
      const p = provider(e, new ThrowingProvisionStore());
      const handle = await p.provision(SPEC, signal());
      expect(handle.created).toBe(true);
      expect(logger.lines.some((l) => l.level === 'warn' && l.message.includes('provision store'))).toBe(true);
      await p.teardown(handle, signal());
      expect(e.harnesses()).toHaveLength(0);
    });
  });
});
