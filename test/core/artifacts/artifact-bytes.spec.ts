import { Readable } from 'node:stream';
import { bytesOf, fixedChunks, newestNamed, newestPerName, readArtifact } from '../../../src/core/artifacts/artifact-bytes.js';
import type { Artifacts } from '../../../src/core/artifacts/artifacts.js';
import { providerArtifacts, toolArtifacts } from '../../../src/core/artifacts/provider-artifacts.js';
import { isAgentRxError } from '../../../src/core/errors.js';
import type { AgentProvider } from '../../../src/core/plugin/agent-provider.js';

async function all(it: AsyncIterable<Buffer>): Promise<string[]> {
  const out: string[] = [];
  for await (const b of it) out.push(b.toString());
  return out;
}

describe('artifact byte helpers', () => {
  describe('fixedChunks', () => {
    it('should re-slice any stream into pieces of the size, the last shorter', async () => {
      expect(await all(fixedChunks(bytesOf(Readable.from([Buffer.from('ab'), Buffer.from('cdefg'), Buffer.from('h')])), 3))).toEqual(['abc', 'def', 'gh']);
      expect(await all(fixedChunks(bytesOf('abcdef'), 3))).toEqual(['abc', 'def']);
    });

    it('should give one empty piece for an empty body', async () => {
      expect(await all(fixedChunks(bytesOf(''), 3))).toEqual(['']);
    });
  });

  describe('bytesOf', () => {
    it('should take text, bytes and async iterables of either', async () => {
      expect(await all(bytesOf('é'))).toEqual(['é']);
      expect(await all(bytesOf(new Uint8Array([104, 105])))).toEqual(['hi']);
      expect(
        await all(
          bytesOf(
            (async function* () {
              yield 'a';
              yield new Uint8Array([98]);
            })(),
          ),
        ),
      ).toEqual(['a', 'b']);
    });
  });

  describe('newestNamed and newestPerName', () => {
    it('should pick the latest createdAt per name, the last listed on a tie', () => {
      const files = [
        { name: 'b', size: 1, createdAt: '2026-01-01T00:00:02Z', id: 'b1' },
        { name: 'a', size: 1, createdAt: '2026-01-01T00:00:03Z', id: 'a1' },
        { name: 'a', size: 2, createdAt: '2026-01-01T00:00:01Z', id: 'a0' },
        { name: 'b', size: 3, createdAt: '2026-01-01T00:00:02Z', id: 'b2' },
      ];
      expect(newestNamed(files, 'a')?.id).toBe('a1');
      expect(newestNamed(files, 'b')?.id).toBe('b2');
      expect(newestNamed(files, 'c')).toBeUndefined();
      expect(newestPerName(files).map((f) => f.id)).toEqual(['a1', 'b2']);
    });
  });

  describe('readArtifact', () => {
    it('should read a fetched body whole', async () => {
      const a = { fetch: async (name: string) => ({ name, body: Readable.from([Buffer.from('x'), Buffer.from('y')]) }) } as Pick<Artifacts, 'fetch'>;
      expect((await readArtifact(a as Artifacts, 'f')).toString()).toBe('xy');
    });
  });
});

describe('providerArtifacts', () => {
  const bare = { id: 'local' } as AgentProvider;
  describe('when the provider has no artifacts', () => {
    it('should throw unsupported naming it, and give tools none', () => {
      let err: unknown;
      try {
        providerArtifacts(bare, 'sess');
      } catch (e) {
        err = e;
      }
      expect(isAgentRxError(err, 'unsupported')).toBe(true);
      expect((err as Error).message).toContain('the local provider has no session artifacts');
      expect(toolArtifacts(bare, 'sess')).toBeUndefined();
    });
  });

  describe('when the provider cannot serve them', () => {
    it('should give tools none instead of failing', () => {
      const broken = {
        id: 'x',
        artifacts: () => {
          throw new Error('not configured');
        },
      } as unknown as AgentProvider;
      expect(toolArtifacts(broken, 'sess')).toBeUndefined();
      expect(toolArtifacts(broken, undefined)).toBeUndefined();
    });
  });
});
