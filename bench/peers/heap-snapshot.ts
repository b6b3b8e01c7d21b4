/**
 * A small reader of V8 heap snapshots (`v8.writeHeapSnapshot()` files) for the retained-memory
 * investigation: totals by constructor, the diff of two snapshots of one process (node ids are
 * stable within a process), and the retainer path from a GC root to a node.
 */
import { readFileSync } from 'node:fs';

interface RawSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** One class of heap objects: its node type and name (the constructor for `object` nodes). */
export interface Group {
  readonly key: string;
  count: number;
  selfSize: number;
}

/** A parsed snapshot with the indices the queries need. */
export class HeapSnapshot {
  readonly nodeCount: number;
  private readonly nf: number;
  private readonly ef: number;
  private readonly nodeTypes: string[];
  private readonly edgeTypes: string[];
  private readonly firstEdge: Uint32Array;
  /** Per node, the first retainer (edge owner node index) list offset, built on demand. */
  private retainers: { first: Uint32Array; owners: Uint32Array; edges: Uint32Array } | undefined;

  private constructor(private readonly raw: RawSnapshot) {
    const m = raw.snapshot.meta;
    this.nf = m.node_fields.length;
    this.ef = m.edge_fields.length;
    this.nodeTypes = m.node_types[0];
    this.edgeTypes = m.edge_types[0];
    this.nodeCount = raw.nodes.length / this.nf;
    this.firstEdge = new Uint32Array(this.nodeCount + 1);
    const ecIdx = m.node_fields.indexOf('edge_count');
    for (let i = 0, e = 0; i < this.nodeCount; i++) {
      this.firstEdge[i] = e;
      e += raw.nodes[i * this.nf + ecIdx]! * this.ef;
      this.firstEdge[i + 1] = e;
    }
  }

  static read(path: string): HeapSnapshot {
    return new HeapSnapshot(JSON.parse(readFileSync(path, 'utf8')) as RawSnapshot);
  }

  type(i: number): string {
    return this.nodeTypes[this.raw.nodes[i * this.nf]!]!;
  }
  name(i: number): string {
    return this.raw.strings[this.raw.nodes[i * this.nf + 1]!]!;
  }
  id(i: number): number {
    return this.raw.nodes[i * this.nf + 2]!;
  }
  selfSize(i: number): number {
    return this.raw.nodes[i * this.nf + 3]!;
  }

  /** `type:name`, the name cut to 80 characters (strings and code get their type only). */
  key(i: number): string {
    const t = this.type(i);
    if (t === 'string' || t === 'concatenated string' || t === 'sliced string' || t === 'number' || t === 'code' || t === 'hidden' || t === 'array')
      return `(${t})${t === 'array' || t === 'hidden' ? ' ' + this.name(i).slice(0, 60) : ''}`;
    return `${t}:${this.name(i).slice(0, 80)}`;
  }

  /** Node indices by id. */
  ids(): Map<number, number> {
    const m = new Map<number, number>();
    for (let i = 0; i < this.nodeCount; i++) m.set(this.id(i), i);
    return m;
  }

  /** Groups by `key`, over the nodes `include` accepts (default all). */
  groups(include: (i: number) => boolean = () => true): Map<string, Group> {
    const out = new Map<string, Group>();
    for (let i = 0; i < this.nodeCount; i++) {
      if (!include(i)) continue;
      const k = this.key(i);
      let g = out.get(k);
      if (!g) out.set(k, (g = { key: k, count: 0, selfSize: 0 }));
      g.count++;
      g.selfSize += this.selfSize(i);
    }
    return out;
  }

  /** Outgoing edges of node `i`: [edge type, edge name, target node index]. */
  *edges(i: number): Generator<[string, string, number]> {
    for (let e = this.firstEdge[i]!; e < this.firstEdge[i + 1]!; e += this.ef) {
      const type = this.edgeTypes[this.raw.edges[e]!]!;
      const nameOrIndex = this.raw.edges[e + 1]!;
      const name = type === 'element' || type === 'hidden' ? String(nameOrIndex) : this.raw.strings[nameOrIndex]!;
      yield [type, name, this.raw.edges[e + 2]! / this.nf];
    }
  }

  /** Nodes and edges that point at node `i` (weak edges skipped). */
  retainersOf(i: number): [owner: number, edgeType: string, edgeName: string][] {
    const r = (this.retainers ??= this.buildRetainers());
    const out: [number, string, string][] = [];
    for (let k = r.first[i]!; k < r.first[i + 1]!; k++) {
      const e = r.edges[k]!;
      const type = this.edgeTypes[this.raw.edges[e]!]!;
      if (type === 'weak') continue;
      const n = this.raw.edges[e + 1]!;
      out.push([r.owners[k]!, type, type === 'element' || type === 'hidden' ? String(n) : this.raw.strings[n]!]);
    }
    return out;
  }

  /**
   * A shortest retainer path from a GC root to node `i` (breadth-first over retainers, at most
   * `maxDepth` steps), rendered root first as `Owner.edge → …`. The stack and handle-scope roots
   * (the frames that took the snapshot) are not taken as holders.
   */
  pathTo(i: number, maxDepth = 30): string {
    const prev = new Map<number, [number, string]>();
    const queue: number[] = [i];
    prev.set(i, [-1, '']);
    let found = -1;
    for (let head = 0, depth = 0; head < queue.length && depth < 200_000; head++, depth++) {
      const n = queue[head]!;
      if (n === 0 || this.type(n) === 'synthetic') {
        // A stack or handle-scope root is where the snapshot was taken from, not a holder.
        if (n !== i && !/^\((Stack roots|Handle scope)\)$/.test(this.name(n))) {
          found = n;
          break;
        }
        continue;
      }
      for (const [owner, type, name] of this.retainersOf(n)) {
        if (prev.has(owner)) continue;
        prev.set(owner, [n, type === 'element' ? `[${name}]` : type === 'internal' || type === 'hidden' ? `{${name}}` : `.${name}`]);
        queue.push(owner);
      }
    }
    if (found < 0) return '(no root found)';
    const parts: string[] = [];
    // Walk forward from the root: prev maps a node to [the node it retains on the way to i, edge].
    let n = found;
    for (let step = 0; step < maxDepth; step++) {
      const p = prev.get(n);
      if (!p || p[0] === -1) break;
      parts.push(`${this.key(n)}${p[1]}`);
      n = p[0];
    }
    parts.push(this.key(i));
    return parts.join(' → ');
  }

  private buildRetainers(): { first: Uint32Array; owners: Uint32Array; edges: Uint32Array } {
    const count = new Uint32Array(this.nodeCount + 1);
    const total = this.raw.edges.length / this.ef;
    for (let e = 0; e < this.raw.edges.length; e += this.ef) count[this.raw.edges[e + 2]! / this.nf]!++;
    const first = new Uint32Array(this.nodeCount + 1);
    for (let i = 0; i < this.nodeCount; i++) first[i + 1] = first[i]! + count[i]!;
    const fill = first.slice();
    const owners = new Uint32Array(total);
    const edges = new Uint32Array(total);
    for (let i = 0; i < this.nodeCount; i++) {
      for (let e = this.firstEdge[i]!; e < this.firstEdge[i + 1]!; e += this.ef) {
        const to = this.raw.edges[e + 2]! / this.nf;
        const k = fill[to]!++;
        owners[k] = i;
        edges[k] = e;
      }
    }
    return { first, owners, edges };
  }
}

/**
 * What `after` holds that `before` did not: groups of the nodes whose ids are new in `after`
 * (allocated between the two snapshots and still reachable), largest self size first.
 */
export function newNodes(before: HeapSnapshot, after: HeapSnapshot): { groups: Group[]; nodes: Map<string, number[]> } {
  const old = before.ids();
  const nodes = new Map<string, number[]>();
  const groups = after.groups((i) => {
    if (old.has(after.id(i))) return false;
    const k = after.key(i);
    let list = nodes.get(k);
    if (!list) nodes.set(k, (list = []));
    if (list.length < 50) list.push(i);
    return true;
  });
  return { groups: [...groups.values()].sort((a, b) => b.selfSize - a.selfSize), nodes };
}
