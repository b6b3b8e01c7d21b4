import { AgentRxError, isAgentRxError, type ErrorCode } from '../../../src/core/errors.js';
import { MemoryLogger } from '../../../src/core/logger.js';
import { openProvisionStore } from '../../../src/core/provision/open-provision-store.js';
import type { ProvisionStore } from '../../../src/core/provision/provision-store.js';
import { Provisioner } from '../../../src/core/provision/provisioner.js';
import { coreStores } from '../../../src/core/store/core-stores.js';
import { tempDir } from '../../support/temp-dir.js';
import { FailingProvisionStore, InMemoryHost, spec } from './versioned-resources.double.js';

/** The AgentRxError `p` rejects with; fails the test unless it rejects with `code`. */
async function rejection(p: Promise<unknown>, code: ErrorCode): Promise<AgentRxError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(isAgentRxError(e, code) ? e.code : e).toBe(code);
  return e as AgentRxError;
}

const signal = new AbortController().signal;

/** The engines the Provisioner is run over: each opened from a fresh `store` section through the core registrations. */
const ENGINES: readonly (readonly [string, () => Promise<Record<string, unknown>>])[] = [
  ['memory', async () => ({ type: 'memory' })],
  ['file', async () => ({ type: 'file', dir: await tempDir('agentrx-provisioner-') })],
];

describe.each(ENGINES)('Provisioner over the %s provision store', (_type, section) => {
  let host: InMemoryHost;
  let store: ProvisionStore;
  let logger: MemoryLogger;
  let provisioner: Provisioner;

  beforeEach(async () => {
    host = new InMemoryHost();
    store = openProvisionStore(await section(), coreStores);
    logger = new MemoryLogger();
    provisioner = new Provisioner(host, store, logger);
  });
  afterEach(async () => {
    await store.close?.();
  });

  /** Ensures `n` versions of `support` (prompts 1…n), oldest first; returns their digests in that order. */
  const versions = async (n: number): Promise<string[]> => {
    const digests: string[] = [];
    for (let i = 1; i <= n; i++) digests.push((await provisioner.ensure('agent', spec('support', i), signal)).digest);
    return digests;
  };
  const stored = async (): Promise<string[]> => (await store.list({ provider: host.provider, kind: 'agent' })).map((e) => e.digest);

  describe('.ensure', () => {
    describe('when called twice with the same spec', () => {
      it('should create once, store the entry, and answer the second from the store', async () => {
        const first = await provisioner.ensure('agent', spec('support'), signal);
        const second = await provisioner.ensure('agent', spec('support'), signal);
        expect(first.created).toBe(true);
        expect(second).toEqual({ ...first, created: false });
        expect(host.calls).toEqual(['ensure support']);
        const entry = await store.get({ provider: host.provider, kind: 'agent', digest: first.digest });
        expect(entry).toMatchObject({ provider: 'test-host', kind: 'agent', base: 'support', name: first.name, id: first.id, handle: first.handle });
      });
    });

    describe('when the host fails', () => {
      it('should reject with its error and store nothing', async () => {
        host.failEnsure = new AgentRxError('provider_error', 'host down');
        await rejection(provisioner.ensure('agent', spec('support'), signal), 'provider_error');
        expect(await stored()).toEqual([]);
      });
    });
  });

  describe('.list', () => {
    it('should give every host version newest first with what the store knows (digest, tags, stored)', async () => {
      const [d1, d2] = await versions(2);
      host.add('agent', 'support', 'support_outside');
      await provisioner.tag('agent', 'support', 'prod', d1!);
      await provisioner.tag('agent', 'support', 'canary', d1!);
      const views = await provisioner.list('agent', 'support', signal);
      expect(views.map((v) => [v.name, v.digest, v.tags, v.stored])).toEqual([
        ['support_outside', undefined, [], false],
        [`support_${d2!.slice(0, 8)}`, d2, [], true],
        [`support_${d1!.slice(0, 8)}`, d1, ['canary', 'prod'], true],
      ]);
    });
  });

  describe('.tag then .resolve', () => {
    it('should move the tag to the digest named in full, by an 8-hex prefix, or in upper case', async () => {
      const [d1, d2] = await versions(2);
      expect((await provisioner.tag('agent', 'support', 'prod', d1!)).digest).toBe(d1);
      expect((await provisioner.resolve('agent', 'support:prod')).digest).toBe(d1);
      await provisioner.tag('agent', 'support', 'prod', d2!.slice(0, 8));
      expect((await provisioner.resolve('agent', 'support:prod')).digest).toBe(d2);
      await provisioner.tag('agent', 'support', 'prod', d1!.toUpperCase());
      expect(await provisioner.resolve('agent', 'support:prod')).toEqual(await store.get({ provider: host.provider, kind: 'agent', digest: d1! }));
    });

    it('should refuse an unknown digest (unknown_version), a short prefix or a bad tag name (invalid_options)', async () => {
      const [d1] = await versions(1);
      await provisioner.ensure('agent', spec('other'), signal);
      await rejection(provisioner.tag('agent', 'support', 'prod', 'f'.repeat(64)), 'unknown_version');
      const other = (await store.list({ provider: host.provider, kind: 'agent', base: 'other' }))[0]!.digest;
      await rejection(provisioner.tag('agent', 'support', 'prod', other), 'unknown_version');
      await rejection(provisioner.tag('agent', 'support', 'prod', d1!.slice(0, 4)), 'invalid_options');
      const bad = await rejection(provisioner.tag('agent', 'support', 'pr od', d1!), 'invalid_options');
      expect(bad.message).toContain('A-Z a-z 0-9 . _ -');
      expect(await store.tags({ provider: host.provider, kind: 'agent', base: 'support' })).toEqual({});
    });

    it('should answer an unknown tag with unknown_tag, a tag of a torn-down version with unknown_version, never a fallback', async () => {
      const [d1] = await versions(1);
      await provisioner.tag('agent', 'support', 'prod', d1!);
      const unknown = await rejection(provisioner.resolve('agent', 'support:canary'), 'unknown_tag');
      expect(unknown.message).toContain('its tags: prod');
      await store.evict({ provider: host.provider, kind: 'agent', digest: d1! });
      await rejection(provisioner.resolve('agent', 'support:prod'), 'unknown_version');
      await rejection(provisioner.resolve('agent', 'support'), 'invalid_options');
    });
  });

  describe('.prune', () => {
    it('should keep the newest `keep` and the tagged ones, remove the rest oldest first and evict them', async () => {
      const [d1, d2, d3, d4, d5] = await versions(5);
      await provisioner.tag('agent', 'support', 'prod', d1!);
      host.calls.length = 0;
      const report = await provisioner.prune('agent', 'support', { keep: 2 }, signal);
      const name = (d: string | undefined): string => `support_${d!.slice(0, 8)}`;
      expect(report.dryRun).toBe(false);
      expect(report.failed).toBeUndefined();
      expect(report.kept.map((v) => v.name)).toEqual([name(d5), name(d4), name(d1)]);
      expect(report.archived.map((v) => v.name)).toEqual([name(d2), name(d3)]);
      expect(host.calls).toEqual(['remove id_2', 'remove id_3']);
      expect((await stored()).sort()).toEqual([d1, d4, d5].sort());
      // Archived versions are not pruned again.
      host.calls.length = 0;
      expect((await provisioner.prune('agent', 'support', { keep: 1 }, signal)).archived.map((v) => v.name)).toEqual([name(d4)]);
      expect(host.calls).toEqual(['remove id_4']);
    });

    it('should remove nothing on a dry run and report what it would', async () => {
      const [d1, d2, d3] = await versions(3);
      host.calls.length = 0;
      const report = await provisioner.prune('agent', 'support', { keep: 1, dryRun: true }, signal);
      expect(report.dryRun).toBe(true);
      expect(report.archived.map((v) => v.id)).toEqual(['id_1', 'id_2']);
      expect(host.calls).toEqual([]);
      expect((await stored()).sort()).toEqual([d1, d2, d3].sort());
    });

    it('should stop at the first removal the host refuses, naming it and what was archived before it', async () => {
      const [, d2, d3, d4] = await versions(4);
      host.refuse.add('id_2');
      host.calls.length = 0;
      const report = await provisioner.prune('agent', 'support', { keep: 1 }, signal);
      expect(report.archived.map((v) => v.id)).toEqual(['id_1']);
      expect(report.failed?.version.id).toBe('id_2');
      expect(report.failed?.error).toBeInstanceOf(AgentRxError);
      expect(report.failed?.error.message).toContain('refused');
      expect(host.calls).toEqual(['remove id_1', 'remove id_2']);
      expect((await stored()).sort()).toEqual([d2, d3, d4].sort());
    });

    it.each([[undefined], [0], [-1], [1.5], ['2']])('should refuse keep %p with invalid_options and remove nothing', async (keep) => {
      await versions(2);
      host.calls.length = 0;
      await rejection(provisioner.prune('agent', 'support', { keep } as unknown as { keep: number }, signal), 'invalid_options');
      expect(host.calls).toEqual([]);
    });
  });

  describe('.teardown', () => {
    it('should remove the version on the host, evict it and drop the tags pointing at it', async () => {
      const [d1, d2] = await versions(2);
      await provisioner.tag('agent', 'support', 'prod', d1!);
      await provisioner.tag('agent', 'support', 'canary', d2!);
      await provisioner.teardown('agent', d1!.slice(0, 10), signal);
      expect(host.resources.find((r) => r.id === 'id_1')?.archived).toBe(true);
      expect(await stored()).toEqual([d2]);
      expect(await store.tags({ provider: host.provider, kind: 'agent', base: 'support' })).toEqual({ canary: d2 });
    });

    it('should keep the entry and its tags when the host refuses, and propagate the error', async () => {
      const [d1] = await versions(1);
      await provisioner.tag('agent', 'support', 'prod', d1!);
      host.refuse.add('id_1');
      await rejection(provisioner.teardown('agent', d1!, signal), 'provider_error');
      expect(await stored()).toEqual([d1]);
      expect((await provisioner.resolve('agent', 'support:prod')).digest).toBe(d1);
    });

    it('should answer a digest it does not store with unknown_version', async () => {
      await versions(1);
      await rejection(provisioner.teardown('agent', 'a'.repeat(64), signal), 'unknown_version');
      expect(host.calls).toEqual(['ensure support']);
    });
  });
});

describe('Provisioner over a failing provision store', () => {
  describe('.ensure', () => {
    it('should log the misses at warn and still ensure on the host every time', async () => {
      const host = new InMemoryHost();
      const logger = new MemoryLogger();
      const provisioner = new Provisioner(host, new FailingProvisionStore(), logger);
      const first = await provisioner.ensure('agent', spec('support'), signal);
      const second = await provisioner.ensure('agent', spec('support'), signal);
      expect([first.created, second.created]).toEqual([true, false]);
      expect(host.calls).toEqual(['ensure support', 'ensure support']);
      expect(logger.lines.map((l) => l.level)).toEqual(['warn', 'warn', 'warn', 'warn']);
      expect(logger.lines[0]!.message).toContain('provision store');
      expect(logger.lines[0]!.message).toContain('is down');
    });
  });

  describe('the commands', () => {
    it('should propagate the store_error', async () => {
      const provisioner = new Provisioner(new InMemoryHost(), new FailingProvisionStore(), new MemoryLogger());
      await rejection(provisioner.tag('agent', 'support', 'prod', 'a'.repeat(64)), 'store_error');
      await rejection(provisioner.resolve('agent', 'support:prod'), 'store_error');
      await rejection(provisioner.prune('agent', 'support', { keep: 1 }, signal), 'store_error');
      await rejection(provisioner.list('agent', 'support', signal), 'store_error');
    });
  });
});
