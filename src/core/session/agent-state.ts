import { createRequire } from 'node:module';
import type * as JsonPatch from 'fast-json-patch';
import type { JsonPatchOperation } from '@ag-ui/core';
import { AgentRxError } from '../errors.js';
import type { AgentRxEvent } from '../events/session-event.js';

let loaded: typeof JsonPatch | undefined;
/** `fast-json-patch`, loaded at the first state a session holds (a session without state never loads it). */
const jsonPatch = (): typeof JsonPatch => (loaded ??= createRequire(import.meta.url)('fast-json-patch') as typeof JsonPatch);

/** A JSON object: the agent's state shared with a client (AG-UI `state`) and with tools (`ctx.state`). */
export type AgentStateValue = Record<string, unknown>;

/**
 * The agent's state of one session: what the client sent (it is the agent's state, never
 * replaced by agentrx's own bookkeeping), changed in place by tools through `ctx.state`. Changes
 * are published as JSON Patch deltas (RFC 6902, computed by `fast-json-patch`) against what was
 * last published, so a client applying them in order holds the same object.
 */
export class AgentState {
  private current: AgentStateValue | undefined;
  /** A copy of what the client was last told (the snapshot plus every delta since). */
  private published: AgentStateValue | undefined;

  constructor(initial?: AgentStateValue) {
    if (initial !== undefined) this.replace(initial);
  }

  /** The live object tools read and change (undefined while the session has no state). */
  get value(): AgentStateValue | undefined {
    return this.current;
  }

  /** The client's state replaces the agent's (a copy: the caller's object is never changed). */
  replace(state: AgentStateValue): void {
    if (!isStateObject(state)) throw new AgentRxError('invalid_options', 'state: must be a JSON object');
    const problem = stateShapeProblem(state);
    if (problem !== undefined) throw new AgentRxError('invalid_options', `state: ${problem}`);
    this.current = jsonPatch().deepClone(state) as AgentStateValue;
    this.published = undefined;
  }

  /**
   * The state to publish at a request's start (a copy), or undefined when there is none or it is
   * empty (AG-UI clients send `{}` by default; a tool's additions still go out as deltas).
   */
  snapshot(): AgentStateValue | undefined {
    if (this.current === undefined) return undefined;
    this.published = jsonPatch().deepClone(this.current) as AgentStateValue;
    return Object.keys(this.current).length > 0 ? (jsonPatch().deepClone(this.current) as AgentStateValue) : undefined;
  }

  /** {@link stateChanges} of this state after tool `tool` ran. */
  changesAfter(tool: string): AgentRxEvent[] {
    return stateChanges(this, tool);
  }

  /**
   * What changed since the last snapshot or delta, as JSON Patch operations (empty: nothing). A
   * state a tool left that is not plain JSON (a cycle, a BigInt, a function, `undefined`, a
   * non-finite number, a class instance) could not reach a client: the change is discarded (the
   * state goes back to what was last published) and `discarded` says where and why.
   */
  delta(): { readonly ops: JsonPatchOperation[]; readonly discarded?: string; readonly snapshot?: AgentStateValue } {
    if (this.current === undefined) return { ops: [] };
    const problem = jsonProblem(this.current) ?? depthProblem(this.current);
    if (problem !== undefined) {
      this.current = jsonPatch().deepClone(this.published ?? {}) as AgentStateValue;
      return { ops: [], discarded: problem };
    }
    const before = this.published ?? {};
    const ops = jsonPatch().compare(before, this.current) as JsonPatchOperation[];
    if (ops.length === 0) return { ops };
    this.published = jsonPatch().deepClone(this.current) as AgentStateValue;
    // A patch through a key clients refuse to patch (prototype guards) goes out as the whole state.
    if (ops.some((op) => unsafePath(op.path) || ('from' in op && typeof op.from === 'string' && unsafePath(op.from))))
      return { ops: [], snapshot: jsonPatch().deepClone(this.current) as AgentStateValue };
    return { ops };
  }
}

/** What a session publishes after tool `tool` ran: its change to the state (a delta or a snapshot), or why it was discarded. */
export function stateChanges(state: AgentState, tool: string): AgentRxEvent[] {
  const { ops, discarded, snapshot } = state.delta();
  const out: AgentRxEvent[] = [];
  if (discarded !== undefined)
    out.push({
      type: 'agentrx.diagnostic',
      message: `tool '${tool}' left the agent state with a value that is not JSON (${discarded}); its state change was discarded`,
    });
  if (ops.length > 0) out.push({ type: 'agentrx.state_delta', delta: ops });
  if (snapshot !== undefined) out.push({ type: 'agentrx.state_snapshot', snapshot });
  return out;
}

/** Where `value` is not plain JSON, as `<path>: <what>`, or undefined when it is (iterative: no depth limit). */
export function jsonProblem(value: unknown): string | undefined {
  // `leave` entries pop an object off the current path once its children are checked.
  const stack: ({ readonly v: unknown; readonly path: string } | { readonly leave: object })[] = [{ v: value, path: '' }];
  const onPath = new Set<object>();
  while (stack.length > 0) {
    const top = stack.pop()!;
    if ('leave' in top) {
      onPath.delete(top.leave);
      continue;
    }
    const { v, path } = top;
    const at = path || '/';
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return `${at}: ${String(v)} is not a JSON number`;
      continue;
    }
    if (typeof v !== 'object') return `${at}: ${typeof v === 'undefined' ? 'undefined' : `a ${typeof v}`} is not JSON`;
    if (onPath.has(v)) return `${at}: a cycle (the object contains itself)`;
    if (!Array.isArray(v)) {
      const proto = Object.getPrototypeOf(v) as unknown;
      if (proto !== Object.prototype && proto !== null) return `${at}: a ${(v as object).constructor?.name ?? 'class'} instance is not a JSON object`;
    }
    onPath.add(v);
    stack.push({ leave: v });
    if (Array.isArray(v)) v.forEach((item, i) => stack.push({ v: item, path: `${path}/${i}` }));
    else for (const [k, item] of Object.entries(v)) stack.push({ v: item, path: `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}` });
  }
  return undefined;
}

/** The deepest nesting a shared state may have (objects and arrays inside the root). */
export const MAX_STATE_DEPTH = 64;

/** Keys a JSON Patch client refuses to change (its prototype-pollution guard): never in a shared state. */
const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor']);

const unsafePath = (pointer: string): boolean => pointer.split('/').some((seg) => UNSAFE_KEYS.has(seg));

/**
 * Why a client's state cannot be the shared state, or undefined: nested deeper than
 * {@link MAX_STATE_DEPTH}, or holding a key (`__proto__`, `constructor`) that AG-UI clients refuse
 * to patch. Iterative, so any depth is judged without exhausting the stack.
 */
export function stateShapeProblem(value: unknown): string | undefined {
  const stack: { readonly v: unknown; readonly path: string; readonly depth: number }[] = [{ v: value, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { v, path, depth } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > MAX_STATE_DEPTH) return `nested more than ${MAX_STATE_DEPTH} levels deep (at ${path.slice(0, 60)}${path.length > 60 ? '…' : ''}); flatten it`;
    for (const [k, item] of Object.entries(v)) {
      if (UNSAFE_KEYS.has(k)) return `the key '${k}' (at ${path || '/'}) is not allowed: AG-UI clients refuse to patch it; rename it`;
      stack.push({ v: item, path: `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, depth: depth + 1 });
    }
  }
  return undefined;
}

/** The depth part of {@link stateShapeProblem} for a state a tool left (its keys are the tool's business). */
function depthProblem(value: unknown): string | undefined {
  const problem = stateShapeProblem(value);
  return problem?.startsWith('nested') ? `/: ${problem}` : undefined;
}

/** True for a plain JSON object (not an array, not null). */
export function isStateObject(v: unknown): v is AgentStateValue {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
