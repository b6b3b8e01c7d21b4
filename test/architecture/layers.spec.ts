import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/*
 * The layer order of src/, enforced: a file imports only from its own folder or from a lower
 * layer, and folders of one layer (plugins, consumers, distributed, servers) never import each
 * other. So the import graph has no arrow up and no circle between folders. Type-only imports
 * count: a type from above is a dependency on above.
 */

const SRC = join(process.cwd(), 'src');

/** Layers, low to high: the longest matching prefix of a path under src/ names its rank. */
const RANKS: ReadonlyArray<readonly [prefix: string, rank: number]> = [
  ['core/errors.ts', 0],
  ['core/logger.ts', 0],
  ['core/model.ts', 0],
  ['core/util/', 1],
  ['core/config/', 2],
  ['core/events/', 3],
  ['core/http/', 4],
  ['core/artifacts/', 4],
  ['core/plugin/', 5],
  ['core/artifacts/provider-artifacts.ts', 6],
  ['core/kernel/', 6],
  ['core/tools/', 7],
  ['core/provision/', 7],
  // Opening a provision store goes through the store registry; the folder's index re-exports the engines.
  ['core/provision/open-provision-store.ts', 9],
  ['core/provision/index.ts', 9],
  ['core/store/', 8],
  ['core/session/', 9],
  ['core/di/', 10],
  ['consumers/', 20],
  ['plugins/', 20],
  ['distributed/', 20],
  ['servers/', 20],
  ['testing/', 30],
  ['default-modules.ts', 40],
  ['agentrx.ts', 41],
  ['index.ts', 42],
  ['cli/', 50],
  ['nest/', 50],
];

/** The folder a file belongs to for the same-layer rule: two segments under plugins, consumers and servers, else one. */
function folderOf(path: string): string {
  const parts = path.split('/');
  const depth = ['plugins', 'consumers', 'servers'].includes(parts[0]) ? 2 : 1;
  return parts.length > depth ? parts.slice(0, depth).join('/') : parts.slice(0, depth - 1).join('/') || path;
}

function rankOf(path: string): number {
  let best: readonly [string, number] | undefined;
  for (const entry of RANKS) if (path.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  if (!best) throw new Error(`src/${path} is in no layer: add its folder to RANKS in test/architecture/layers.spec.ts`);
  return best[1];
}

/** Every relative import (static, re-export, dynamic, type-only) of every .ts file under src/, as [from, to] paths under src/. */
function imports(): Array<readonly [string, string]> {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const edges: Array<readonly [string, string]> = [];
  for (const file of files) {
    const text = readFileSync(join(SRC, file), 'utf8');
    for (const m of text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = relative(SRC, normalize(join(SRC, dirname(file), m[1]))).replace(/\.js$/, '.ts');
      edges.push([file.split('\\').join('/'), target.split('\\').join('/')]);
    }
  }
  return edges;
}

describe('the layer order of src/', () => {
  const edges = imports();

  it('finds the imports it checks', () => {
    expect(edges.length).toBeGreaterThan(500);
    expect(edges).toContainEqual(['agentrx.ts', 'core/errors.ts']);
  });

  it('has no import from a lower layer to a higher one', () => {
    const upward = edges.filter(([from, to]) => rankOf(to) > rankOf(from)).map(([from, to]) => `src/${from} imports src/${to}`);
    expect(upward).toEqual([]);
  });

  it('has no import between two folders of one layer', () => {
    const sideways = edges
      .filter(([from, to]) => rankOf(to) === rankOf(from) && folderOf(to) !== folderOf(from) && rankOf(from) >= 20)
      .map(([from, to]) => `src/${from} imports src/${to}`);
    expect(sideways).toEqual([]);
  });

  it('ranks a few known files as the design says', () => {
    expect(rankOf('core/plugin/live-session.ts')).toBeLessThan(rankOf('core/session/session.ts'));
    expect(rankOf('servers/agui-http/index.ts')).toBeGreaterThan(rankOf('core/di/core-module.ts'));
    expect(folderOf('plugins/providers/local/local.provider.ts')).toBe('plugins/providers');
    expect(folderOf('distributed/redis-store/redis-session-store.ts')).toBe('distributed');
    expect(folderOf('consumers/agentrx-payloads.ts')).toBe('consumers');
  });
});
