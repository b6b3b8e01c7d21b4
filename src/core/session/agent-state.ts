import jsonPatch from 'fast-json-patch';
import type { JsonPatchOperation } from '@ag-ui/core';
import { AgentRxError } from '../errors.js';

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
    this.current = jsonPatch.deepClone(state) as AgentStateValue;
    this.published = undefined;
  }

  /**
   * The state to publish at a request's start (a copy), or undefined when there is none or it is
   * empty (AG-UI clients send `{}` by default; a tool's additions still go out as deltas).
   */
  snapshot(): AgentStateValue | undefined {
    if (this.current === undefined) return undefined;
    this.published = jsonPatch.deepClone(this.current) as AgentStateValue;
    return Object.keys(this.current).length > 0 ? (jsonPatch.deepClone(this.current) as AgentStateValue) : undefined;
  }

  /** What changed since the last snapshot or delta, as JSON Patch operations (empty: nothing). */
  delta(): JsonPatchOperation[] {
    if (this.current === undefined) return [];
    const before = this.published ?? {};
    const ops = jsonPatch.compare(before, this.current) as JsonPatchOperation[];
    if (ops.length > 0) this.published = jsonPatch.deepClone(this.current) as AgentStateValue;
    return ops;
  }
}

/** True for a plain JSON object (not an array, not null). */
export function isStateObject(v: unknown): v is AgentStateValue {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
