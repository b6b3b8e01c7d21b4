import { plainToInstance } from 'class-transformer';
import { HttpClientFactoryImpl } from '../../../../src/core/http/http-client-factory.js';
import { MemoryLogger } from '../../../../src/core/logger.js';
import type { AgentSpec } from '../../../../src/core/model.js';
import type { ProvisionStore } from '../../../../src/core/provision/provision-store.js';
import { MemoryProvisionStore } from '../../../../src/core/store/memory/memory-provision-store.js';
import { CmaProviderOptionsClass } from '../../../../src/plugins/providers/claude-managed-agents/cma.config.js';
import { CmaAgentProvider } from '../../../../src/plugins/providers/claude-managed-agents/cma.provider.js';
import { startCmaEmulator, type CmaEmulator, type CmaEmulatorOptions } from '../../../../src/testing/cma-emulator.js';
import { failure } from '../../../fakes/failure.js';
import { describeEachStore, ThrowingProvisionStore } from '../provision-stores.js';
import { API_KEY } from './cma-fixtures.js';

const spec: AgentSpec = { name: 'support', systemPrompt: 'Be brief.', tools: [] };
/** The spec with another system prompt: another version of the same base. */
const version = (n: number): AgentSpec => ({ ...spec, systemPrompt: `Prompt ${n}.` });
const signal = (): AbortSignal => new AbortController().signal;

describe('CmaAgentProvider versioned provisioning', () => {
  let emu: CmaEmulator | undefined;
  let logger: MemoryLogger;
  const stores: ProvisionStore[] = [];
  beforeEach(() => (logger = new MemoryLogger()));
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
    for (const s of stores.splice(0)) await s.close?.();
  });

  async function start(o: CmaEmulatorOptions = {}): Promise<CmaEmulator> {
    emu = await startCmaEmulator({ apiKey: API_KEY, ...o });
    return emu;
  }

  function provider(e: CmaEmulator, store: ProvisionStore | undefined, overrides: Record<string, unknown> = {}): CmaAgentProvider {
    if (store) stores.push(store);
    const options = plainToInstance(
      CmaProviderOptionsClass,
      { apiKey: API_KEY, baseUrl: e.baseUrl, retryBaseMs: 1, ...overrides },
      { exposeDefaultValues: true },
    );
    return new CmaAgentProvider(options, new HttpClientFactoryImpl(), logger, undefined, store);
  }

  const posts = (e: CmaEmulator, path: RegExp): { path: string; status: number }[] =>
    e.requests.filter((r) => r.method === 'POST' && path.test(r.path)).map((r) => ({ path: r.path, status: r.status }));

  describeEachStore((kind) => {
    describe('.provision, then again from a second process sharing the store', () => {
      it('should create both versions once and answer the second from the store without any host call', async () => {
        const e = await start();
        const store = await kind.open();
        const first = await provider(e, store).provision(spec, signal());
        const before = e.requests.length;
        const second = await provider(e, store).provision(spec, signal());
        expect(e.requests.length).toBe(before);
        expect(second).toEqual({ ...first, provisioned: { agent: false, environment: false } });
        const ensured = await provider(e, store).ensureAgent(spec, signal());
        expect(ensured).toEqual({ handle: { agentId: first.agentId, agentName: first.agentName }, digest: first.agentDigest, created: false });
      });
    });

    describe('tags', () => {
      it('should tag a version, resolve the config option agent: "support:prod" to it, and refuse an unknown tag', async () => {
        const e = await start();
        const store = await kind.open();
        const p = provider(e, store);
        const v1 = await p.ensureAgent(version(1), signal());
        await p.ensureAgent(version(2), signal());
        const entry = await p.versioned().tag('agent', 'support', 'prod', v1.digest.slice(0, 8));
        expect(entry.digest).toBe(v1.digest);
        // Another process selects the agent by tag: no agent is created for its (changed) spec.
        const tagged = provider(e, store, { agent: 'support:prod' });
        const agentsBefore = e.agents.size;
        const handle = await tagged.provision(version(3), signal());
        expect(handle).toMatchObject({ agentId: v1.handle.agentId, agentDigest: v1.digest, provisioned: { agent: false } });
        expect(e.agents.size).toBe(agentsBefore);
        const requestsBefore = e.requests.length;
        const err = await failure(provider(e, store, { agent: 'support:canary' }).provision(spec, signal()));
        expect(err).toMatchObject({ code: 'unknown_tag', message: expect.stringContaining('its tags: prod') });
        expect(e.requests.length).toBe(requestsBefore);
        const listed = await p.versioned().list('agent', 'support', signal());
        expect(listed.map((v) => [v.digest, v.tags, v.archived])).toEqual([
          [expect.any(String), [], false],
          [v1.digest, ['prod'], false],
        ]);
      });
    });

    describe('.prune', () => {
      it('should keep the newest and the tagged versions, archive the rest oldest first, and evict them', async () => {
        const e = await start();
        const store = await kind.open();
        const p = provider(e, store);
        const vs = [];
        for (let n = 1; n <= 4; n++) vs.push(await p.ensureAgent(version(n), signal()));
        await p.versioned().tag('agent', 'support', 'prod', vs[0]!.digest);
        const dry = await p.versioned().prune('agent', 'support', { keep: 1, dryRun: true }, signal());
        expect(dry.archived.map((v) => v.id)).toEqual([vs[1]!.handle.agentId, vs[2]!.handle.agentId]);
        expect(posts(e, /archive$/)).toEqual([]);
        const report = await p.versioned().prune('agent', 'support', { keep: 1 }, signal());
        expect(report.dryRun).toBe(false);
        expect(report.failed).toBeUndefined();
        expect(report.archived.map((v) => v.id)).toEqual([vs[1]!.handle.agentId, vs[2]!.handle.agentId]);
        expect(report.kept.map((v) => v.id).sort()).toEqual([vs[0]!.handle.agentId, vs[3]!.handle.agentId].sort());
        expect(e.agents.get(vs[1]!.handle.agentId)!['archived_at']).not.toBeNull();
        expect(await store.get({ provider: 'claude-managed-agents', kind: 'agent', digest: vs[1]!.digest })).toBeUndefined();
        expect(await store.get({ provider: 'claude-managed-agents', kind: 'agent', digest: vs[0]!.digest })).toBeDefined();
        // Archived versions are listed (flagged) and never pruned again.
        const listed = await p.versioned().list('agent', 'support', signal());
        expect(listed.filter((v) => v.archived)).toHaveLength(2);
        const again = await p.versioned().prune('agent', 'support', { keep: 1 }, signal());
        expect(again.archived).toEqual([]);
      });

      it('should stop at an archive the host refuses and report what it archived before', async () => {
        const e = await start({ faults: { archiveFaults: { agents: { 1: { kind: 'status', status: 403 } } } } });
        const store = await kind.open();
        const p = provider(e, store);
        const vs = [];
        for (let n = 1; n <= 4; n++) vs.push(await p.ensureAgent(version(n), signal()));
        const report = await p.versioned().prune('agent', 'support', { keep: 1 }, signal());
        expect(report.archived.map((v) => v.id)).toEqual([vs[0]!.handle.agentId]);
        expect(report.failed).toMatchObject({ version: { id: vs[1]!.handle.agentId }, error: { code: 'http_error', details: { status: 403 } } });
        expect(await store.get({ provider: 'claude-managed-agents', kind: 'agent', digest: vs[1]!.digest })).toBeDefined();
        expect(e.agents.get(vs[2]!.handle.agentId)!['archived_at']).toBeNull();
      });
    });

    describe('.teardown', () => {
      it('should archive what it created and evict it, but keep it stored when the host refuses', async () => {
        const e = await start({ faults: { archiveFaults: { environments: { 0: { kind: 'status', status: 403 } } } } });
        const store = await kind.open();
        const p = provider(e, store);
        const handle = await p.provision(spec, signal());
        const err = await failure(p.teardown(handle, signal()));
        expect(err).toMatchObject({ code: 'http_error', details: { status: 403 } });
        const key = (k: string, digest: string | undefined) => ({ provider: 'claude-managed-agents', kind: k, digest: digest! });
        expect(await store.get(key('agent', handle.agentDigest))).toBeUndefined();
        expect(await store.get(key('environment', handle.environmentDigest))).toBeDefined();
        await p.teardown({ ...handle, provisioned: { agent: false, environment: true } }, signal());
        expect(await store.get(key('environment', handle.environmentDigest))).toBeUndefined();
        expect(e.environments.get(handle.environmentId)!['archived_at']).not.toBeNull();
      });
    });
  });

  describe('409 recovery by exact name', () => {
    const conflictOnce = { createFaults: { agents: { 0: { kind: 'status' as const, status: 409 } } } };

    it('should adopt a live agent of that name', async () => {
      const e = await start();
      const first = await provider(e, new MemoryProvisionStore()).ensureAgent(spec, signal());
      const again = await provider(e, new MemoryProvisionStore()).ensureAgent(spec, signal());
      expect(again).toEqual({ ...first, created: false });
      expect(posts(e, /^\/v1\/agents$/).map((r) => r.status)).toEqual([200, 409]);
    });

    it('should fail with resource_archived when the agent of that name is archived', async () => {
      const e = await start({ faults: { createFaults: { agents: { 1: { kind: 'status', status: 409 } } } } });
      const p = provider(e, new MemoryProvisionStore());
      const first = await p.ensureAgent(spec, signal());
      await p.versioned().teardown('agent', first.digest, signal());
      const err = await failure(provider(e, new MemoryProvisionStore()).ensureAgent(spec, signal()));
      expect(err).toMatchObject({ code: 'resource_archived', details: { name: first.handle.agentName, id: first.handle.agentId } });
      expect(err.message).toContain('is archived');
    });

    it('should fail with name_conflict when no agent of that name is listed', async () => {
      const e = await start({ faults: conflictOnce });
      const err = await failure(provider(e, new MemoryProvisionStore()).ensureAgent(spec, signal()));
      expect(err).toMatchObject({ code: 'name_conflict', details: { status: 409 } });
      expect(e.requests.some((r) => r.path === '/v1/agents' && r.method === 'GET' && r.query['include_archived'] === 'true')).toBe(true);
    });
  });

  describe('.provision when the agent step fails after the environment was created', () => {
    it('should archive the environment and forget it in the store, so the next provisioning creates a fresh one', async () => {
      const e = await start({ faults: { createFaults: { agents: { 0: { kind: 'status', status: 400 } } } } });
      const store = new MemoryProvisionStore();
      const err = await failure(provider(e, store).provision(spec, signal()));
      expect(err).toMatchObject({ code: 'http_error', details: { status: 400, rolledBack: true } });
      expect(await store.list({ provider: 'claude-managed-agents', kind: 'environment' })).toEqual([]);
      const handle = await provider(e, store).provision(spec, signal());
      expect(handle.provisioned).toEqual({ agent: true, environment: true });
      expect(e.environments.size).toBe(2);
    });
  });

  describe('with a store that throws', () => {
    it('should provision as on a miss (logged at warn) and still tear down on the host', async () => {
      const e = await start();
      const store = new ThrowingProvisionStore();
      const p = provider(e, store);
      const handle = await p.provision(spec, signal());
      expect(handle.provisioned).toEqual({ agent: true, environment: true });
      expect(logger.lines.filter((l) => l.level === 'warn' && l.message.includes('provision store')).length).toBeGreaterThan(0);
      await p.teardown(handle, signal());
      expect(e.agents.get(handle.agentId)!['archived_at']).not.toBeNull();
      expect(e.environments.get(handle.environmentId)!['archived_at']).not.toBeNull();
      await expect(p.versioned().tag('agent', 'support', 'prod', handle.agentDigest!)).rejects.toMatchObject({ code: 'store_error' });
    });
  });
});
