import { isAgentRxError } from '../../../src/core/errors.js';
import type { ProvisionEntry, ProvisionStore } from '../../../src/core/provision/provision-store.js';

/** What a conformance run gets from its engine: a fresh, empty store, another one on the same data (durable engines), and cleanup. */
export interface ProvisionStoreUnderTest {
  readonly store: ProvisionStore;
  /** A second store opened from the same section (what another process sees); durable engines only. */
  reopen?(): Promise<ProvisionStore>;
  cleanup(): Promise<void>;
}

/** Entries and bases for the conformance cases. */
export class ProvisionFixtures {
  static readonly provider = 'claude-managed-agents';

  /** An entry of `base` with `digest` (a hex string) created at `createdAt`. */
  static entry(base: string, digest: string, createdAt: number, over: Partial<ProvisionEntry> = {}): ProvisionEntry {
    return {
      provider: ProvisionFixtures.provider,
      kind: 'agent',
      base,
      digest,
      name: `${base}_${digest.slice(0, 8)}`,
      id: `agent_${digest.slice(0, 12)}`,
      handle: { agentId: `agent_${digest.slice(0, 12)}`, version: 1, tools: ['echo'], nested: { ok: true, n: null } },
      createdAt,
      ...over,
    };
  }

  /** A 64-hex digest made of `c` repeated (`'a'` → `aaaa…`). */
  static digest(c: string): string {
    return c.repeat(64 / c.length);
  }

  static base(base: string, kind = 'agent'): { provider: string; kind: string; base: string } {
    return { provider: ProvisionFixtures.provider, kind, base };
  }
}

const F = ProvisionFixtures;

/** The `store_error` `p` rejects with (fails the test if it resolves or rejects with anything else). */
export async function provisionStoreErrorOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    expect(isAgentRxError(e, 'store_error')).toBe(true);
    return e as Error;
  }
  throw new Error('expected a store_error, but the call succeeded');
}

/**
 * The ProvisionStore contract, written once: `provision-engines.spec.ts` runs it over every
 * registered store engine, each opened through its registration from a `store` section.
 */
export function describeProvisionStore(name: string, makeStore: () => Promise<ProvisionStoreUnderTest>, options: { readonly durable: boolean }): void {
  describe(`${name} (ProvisionStore conformance)`, () => {
    let under: ProvisionStoreUnderTest;
    let store: ProvisionStore;

    beforeEach(async () => {
      under = await makeStore();
      store = under.store;
    });
    afterEach(async () => {
      await under.cleanup();
    });

    describe('.put then .get', () => {
      it('should round-trip the entry as plain JSON, names with any characters included', async () => {
        const entry = F.entry('Support Agent/../x:y?%', F.digest('a'), 1_000, { provider: 'p/../q', kind: 'Kind:1 .' });
        await store.put(entry);
        expect(await store.get({ provider: 'p/../q', kind: 'Kind:1 .', digest: F.digest('a') })).toEqual(entry);
      });

      it('should replace the entry on a second put of the same key', async () => {
        await store.put(F.entry('a', F.digest('a'), 1_000));
        await store.put(F.entry('a', F.digest('a'), 2_000, { id: 'agent_new' }));
        expect(await store.get({ provider: F.provider, kind: 'agent', digest: F.digest('a') })).toEqual(
          F.entry('a', F.digest('a'), 2_000, { id: 'agent_new' }),
        );
      });

      it('should keep its own copy (changing what was put or got changes nothing stored)', async () => {
        const entry = F.entry('a', F.digest('a'), 1_000) as ProvisionEntry & { handle: { agentId: string } };
        await store.put(entry);
        entry.handle.agentId = 'changed';
        const got = (await store.get({ provider: F.provider, kind: 'agent', digest: F.digest('a') })) as ProvisionEntry & { handle: { agentId: string } };
        got.handle.agentId = 'changed again';
        expect(await store.get({ provider: F.provider, kind: 'agent', digest: F.digest('a') })).toEqual(F.entry('a', F.digest('a'), 1_000));
      });

      it('should keep keys of another provider or kind apart', async () => {
        await store.put(F.entry('a', F.digest('a'), 1_000));
        await store.put(F.entry('a', F.digest('a'), 2_000, { kind: 'environment' }));
        await store.put(F.entry('a', F.digest('a'), 3_000, { provider: 'bedrock-agentcore' }));
        expect((await store.get({ provider: F.provider, kind: 'agent', digest: F.digest('a') }))?.createdAt).toBe(1_000);
        expect((await store.get({ provider: F.provider, kind: 'environment', digest: F.digest('a') }))?.createdAt).toBe(2_000);
        expect((await store.get({ provider: 'bedrock-agentcore', kind: 'agent', digest: F.digest('a') }))?.createdAt).toBe(3_000);
      });

      it('should refuse what is not an entry with a store_error', async () => {
        const bad = { ...F.entry('a', F.digest('a'), 1_000), createdAt: 'yesterday' } as unknown as ProvisionEntry;
        await provisionStoreErrorOf(store.put(bad));
        await provisionStoreErrorOf(store.put({ ...F.entry('a', F.digest('a'), 1_000), digest: '' }));
        expect(await store.list({ provider: F.provider, kind: 'agent' })).toEqual([]);
      });
    });

    describe('.get', () => {
      it('should give undefined for a key never put', async () => {
        expect(await store.get({ provider: F.provider, kind: 'agent', digest: F.digest('f') })).toBeUndefined();
      });
    });

    describe('.evict', () => {
      it('should remove the entry, leave the tags pointing at it, and be a no-op when absent', async () => {
        await store.put(F.entry('a', F.digest('a'), 1_000));
        await store.setTag(F.base('a'), 'prod', F.digest('a'));
        await store.evict({ provider: F.provider, kind: 'agent', digest: F.digest('a') });
        await store.evict({ provider: F.provider, kind: 'agent', digest: F.digest('a') });
        expect(await store.get({ provider: F.provider, kind: 'agent', digest: F.digest('a') })).toBeUndefined();
        expect(await store.tags(F.base('a'))).toEqual({ prod: F.digest('a') });
      });
    });

    describe('.list', () => {
      it("should give the base's entries newest createdAt first, or every base's without a base", async () => {
        await store.put(F.entry('a', F.digest('1'), 1_000));
        await store.put(F.entry('a', F.digest('3'), 3_000));
        await store.put(F.entry('b', F.digest('2'), 2_000));
        await store.put(F.entry('a', F.digest('4'), 4_000, { kind: 'environment' }));
        await store.put(F.entry('a', F.digest('5'), 5_000, { provider: 'bedrock-agentcore' }));
        expect((await store.list({ provider: F.provider, kind: 'agent', base: 'a' })).map((e) => e.createdAt)).toEqual([3_000, 1_000]);
        expect(await store.list({ provider: F.provider, kind: 'agent' })).toEqual([
          F.entry('a', F.digest('3'), 3_000),
          F.entry('b', F.digest('2'), 2_000),
          F.entry('a', F.digest('1'), 1_000),
        ]);
      });

      it('should order entries of the same createdAt by digest, and give [] when there are none', async () => {
        await store.put(F.entry('a', F.digest('c'), 1_000));
        await store.put(F.entry('a', F.digest('a'), 1_000));
        await store.put(F.entry('a', F.digest('b'), 1_000));
        expect((await store.list({ provider: F.provider, kind: 'agent', base: 'a' })).map((e) => e.digest)).toEqual([
          F.digest('a'),
          F.digest('b'),
          F.digest('c'),
        ]);
        expect(await store.list({ provider: F.provider, kind: 'harness' })).toEqual([]);
        expect(await store.list({ provider: F.provider, kind: 'agent', base: 'nope' })).toEqual([]);
      });

      it('should tell bases that differ only in case apart', async () => {
        await store.put(F.entry('Agent', F.digest('a'), 1_000));
        await store.put(F.entry('agent', F.digest('b'), 2_000));
        expect((await store.list({ provider: F.provider, kind: 'agent', base: 'Agent' })).map((e) => e.digest)).toEqual([F.digest('a')]);
      });
    });

    describe('tags', () => {
      it('should set, move and delete tags of a base, a delete of an absent tag being a no-op', async () => {
        await store.setTag(F.base('a'), 'prod', F.digest('1'));
        await store.setTag(F.base('a'), 'canary', F.digest('2'));
        await store.setTag(F.base('a'), 'prod', F.digest('2'));
        expect(await store.tags(F.base('a'))).toEqual({ prod: F.digest('2'), canary: F.digest('2') });
        await store.deleteTag(F.base('a'), 'canary');
        await store.deleteTag(F.base('a'), 'never-set');
        expect(await store.tags(F.base('a'))).toEqual({ prod: F.digest('2') });
      });

      it('should keep the tags of each base, kind and provider apart (case included)', async () => {
        await store.setTag(F.base('Agent'), 'Prod', F.digest('1'));
        await store.setTag(F.base('Agent'), 'prod', F.digest('2'));
        await store.setTag(F.base('agent'), 'prod', F.digest('3'));
        await store.setTag(F.base('Agent', 'environment'), 'prod', F.digest('4'));
        await store.setTag({ provider: 'bedrock-agentcore', kind: 'agent', base: 'Agent' }, 'prod', F.digest('5'));
        expect(await store.tags(F.base('Agent'))).toEqual({ Prod: F.digest('1'), prod: F.digest('2') });
        expect(await store.tags(F.base('agent'))).toEqual({ prod: F.digest('3') });
        expect(await store.tags(F.base('none'))).toEqual({});
      });
    });

    if (options.durable) {
      describe('when reopened from the same section', () => {
        it('should see the entries and tags of the first store', async () => {
          await store.put(F.entry('a', F.digest('a'), 1_000));
          await store.setTag(F.base('a'), 'prod', F.digest('a'));
          const other = await under.reopen!();
          try {
            expect(await other.get({ provider: F.provider, kind: 'agent', digest: F.digest('a') })).toEqual(F.entry('a', F.digest('a'), 1_000));
            expect(await other.tags(F.base('a'))).toEqual({ prod: F.digest('a') });
          } finally {
            await other.close?.();
          }
        });
      });
    }
  });
}
