import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { CmaFaultPlan, CmaScriptTurn, CmaWireEvent } from './cma-script.js';

/**
 * The state of one Claude Managed Agents emulator: its sessions, agents and environments, the
 * request log, the deterministic id and clock counters, and the change signal every `waitFor`
 * listens to. Shared by the HTTP routes, the stream writer and the scripted agent.
 */

/** A JSON object. */
export type Json = Record<string, unknown>;

/** One request the emulator received. Fields after `body` change as the response proceeds. */
export interface CmaRecordedRequest {
  /** 0-based over all requests. */
  readonly index: number;
  /** HTTP method, upper case. */
  readonly method: string;
  /** URL path without the query. */
  readonly path: string;
  /** Query parameters (a repeated one as an array). */
  readonly query: Readonly<Record<string, string | string[]>>;
  /** Lower-case names; credentials redacted to `[redacted]` (with the auth scheme kept). */
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON body (undefined when empty or not JSON). */
  readonly body: unknown;
  /** Status sent (0 until the head is written; 0 forever for a dropped connection). */
  status: number;
  /** True once the response is closed (ended, dropped, or abandoned by the client). */
  closed: boolean;
  /** True when the connection closed before the response ended. */
  clientAborted: boolean;
}

/** A read-only view of one emulated session. */
export interface CmaEmulatorSession {
  /** `sesn_…` */
  readonly id: string;
  /** `running` while the scripted agent works (e.g. during `thinkMs`), else `idle` or `terminated`. */
  readonly status: 'idle' | 'running' | 'terminated';
  /** Every event, oldest first, as the list endpoint returns them. */
  readonly history: readonly CmaWireEvent[];
  /** User events accepted, in order, as stored (with ids). */
  readonly received: readonly CmaWireEvent[];
  /** Stream requests served for this session. */
  readonly attachments: number;
  /** Streams currently open. */
  readonly openStreams: number;
  /** `user.interrupt` events received. */
  readonly interrupts: number;
}

/** One open SSE stream of a session. */
export interface Stream {
  readonly res: ServerResponse;
  /** The client asked for `event_deltas` previews of `agent.message`. */
  readonly deltas: boolean;
  /** False once a fault ended it (later events of the session go to history only). */
  live: boolean;
  heartbeat: NodeJS.Timeout | undefined;
}

/** One emulated session. */
export interface Session {
  readonly id: string;
  readonly agentId: string;
  readonly environmentId: string;
  readonly created: string;
  status: 'idle' | 'running' | 'terminated';
  archivedAt: string | null;
  readonly history: CmaWireEvent[];
  readonly received: CmaWireEvent[];
  readonly streams: Set<Stream>;
  attachments: number;
  /** Created by `seedSession`: its history predates any stream, so every attach is a re-attach. */
  seeded: boolean;
  interrupts: number;
  /** Custom tool use ids (and server tool uses awaiting confirmation) the agent waits for. */
  blocking: string[];
  /** Server tool uses awaiting a `user.tool_confirmation`, by id: the text of their result. */
  readonly asks: Map<string, string>;
  /** Every custom tool use id of the session (for the unknown-id check). */
  readonly toolUseIds: Set<string>;
  readonly answered: Set<string>;
  /** Tool-use ids whose arriving results first get a stale idle (fault). */
  readonly staleFor: Set<string>;
  /** Input batches waiting while the agent is busy. */
  readonly queue: (() => void)[];
  busy: boolean;
  think: NodeJS.Timeout | undefined;
  /** Result echoes held for late delivery (fault). */
  readonly lateEchoes: CmaWireEvent[];
}

/** Ids and timestamps start here and advance one second per use: deterministic per emulator. */
const EPOCH = Date.UTC(2026, 3, 1);

/** The shared state of one emulator (see the file comment). */
export class CmaEmulatorState {
  readonly requests: CmaRecordedRequest[] = [];
  readonly sessions = new Map<string, Session>();
  /** Read-only views of `sessions`, by id (what `CmaEmulator.sessions` exposes). */
  readonly views = new Map<string, CmaEmulatorSession>();
  readonly agents = new Map<string, Json>();
  readonly environments = new Map<string, Json>();
  /** Turns consumed in order, one per turn any session starts. */
  readonly script: readonly CmaScriptTurn[];
  readonly faults: CmaFaultPlan;
  readonly counters = {
    event: 0,
    resource: 0,
    clock: 0,
    frame: 0,
    turn: 0,
    sends: 0,
    streams: 0,
    lists: 0,
    creates: { sessions: 0, agents: 0, environments: 0 },
    archives: { agents: 0, environments: 0 },
  };
  private readonly changes = new EventEmitter();

  constructor(script: readonly CmaScriptTurn[], faults: CmaFaultPlan) {
    this.script = [...script];
    this.faults = faults;
    this.changes.setMaxListeners(0);
  }

  /** Signals a change: every pending `waitFor` checks its predicate again. */
  changed(): void {
    this.changes.emit('change');
  }

  /** Resolves once `predicate` holds (checked now and after every change). Never rejects. */
  waitFor(predicate: () => boolean): Promise<void> {
    return new Promise<void>((resolve) => {
      const check = (): void => {
        if (predicate()) {
          this.changes.off('change', check);
          resolve();
        }
      };
      this.changes.on('change', check);
      check();
    });
  }

  /** The next tick of the emulator's clock, as an ISO timestamp. */
  now(): string {
    return new Date(EPOCH + ++this.counters.clock * 1000).toISOString();
  }

  newEventId(): string {
    return `sevt_${String(++this.counters.event).padStart(6, '0')}`;
  }

  newResourceId(prefix: string): string {
    return `${prefix}_${String(++this.counters.resource).padStart(6, '0')}`;
  }

  /** `event` with an `id` and a `processed_at`, unless it has them already. */
  stamp(event: CmaWireEvent): CmaWireEvent {
    return {
      ...event,
      id: typeof event['id'] === 'string' ? event['id'] : this.newEventId(),
      processed_at: typeof event['processed_at'] === 'string' ? event['processed_at'] : this.now(),
    };
  }

  /** Creates an idle session with an empty history and registers it (and its view). */
  newSession(agentId: string, environmentId: string): Session {
    const s: Session = {
      id: this.newResourceId('sesn'),
      agentId,
      environmentId,
      created: this.now(),
      status: 'idle',
      archivedAt: null,
      history: [],
      received: [],
      streams: new Set(),
      attachments: 0,
      seeded: false,
      interrupts: 0,
      blocking: [],
      asks: new Map(),
      toolUseIds: new Set(),
      answered: new Set(),
      staleFor: new Set(),
      queue: [],
      busy: false,
      think: undefined,
      lateEchoes: [],
    };
    this.sessions.set(s.id, s);
    this.views.set(s.id, viewOf(s));
    this.changed();
    return s;
  }

  /** Forgets a deleted session (its streams are the caller's to end). */
  deleteSession(s: Session): void {
    this.sessions.delete(s.id);
    this.views.delete(s.id);
  }
}

/** A live read-only view of one session. */
function viewOf(s: Session): CmaEmulatorSession {
  return {
    id: s.id,
    get status() {
      return s.status;
    },
    history: s.history,
    received: s.received,
    get attachments() {
      return s.attachments;
    },
    get openStreams() {
      return s.streams.size;
    },
    get interrupts() {
      return s.interrupts;
    },
  };
}

export function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
