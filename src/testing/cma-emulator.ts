import { createServer } from 'node:http';
import { CmaScriptedAgent } from './cma-emulator/cma-agent.js';
import { writeSessionOutput } from './cma-emulator/cma-files-store.js';
import { CmaRoutes } from './cma-emulator/cma-routes.js';
import type { CmaFaultPlan, CmaScriptTurn, CmaWireEvent } from './cma-emulator/cma-script.js';
import { CmaEmulatorState, type CmaEmulatorSession, type CmaRecordedRequest } from './cma-emulator/cma-state.js';
import { CmaStreams } from './cma-emulator/cma-streams.js';
import { listenLoopback } from './emulator-http.js';

export type {
  CmaFaultPlan,
  CmaGetFault,
  CmaPostFault,
  CmaScriptServerToolUse,
  CmaScriptToolUse,
  CmaScriptTurn,
  CmaWireEvent,
} from './cma-emulator/cma-script.js';
export type { CmaEmulatorSession, CmaRecordedRequest } from './cma-emulator/cma-state.js';
export type { CmaFilesFaultPlan, CmaFilesSlowFault, CmaFilesStatusFault } from './cma-emulator/cma-files-store.js';

/**
 * A loopback Claude Managed Agents server for tests and demos (beta `managed-agents-2026-04-01`).
 *
 * Endpoints: agents and environments (create with 409 on a taken name, get, list, archive;
 * environments also delete), sessions (create, get, list, archive, delete), `POST
 * /v1/sessions/{id}/events`, `GET /v1/sessions/{id}/events` (cursor pages: `limit`, `page`,
 * `next_page`), and the SSE stream `GET /v1/sessions/{id}/events/stream` (an `event:` line on every
 * frame, heartbeat comments, optional `event_deltas` previews). Like the service it accepts
 * `x-api-key` or `Authorization: Bearer`, requires the beta header, ignores `?beta=true`, gives
 * every event an `id` and `processed_at`, echoes accepted user events into the stream, and answers
 * 400 to an empty `events` list or a result for an unknown tool use.
 *
 * The scripted agent plays `script` turn by turn (see `CmaScriptTurn`); `faults` injects drops,
 * stalls, duplicates, malformed frames, a frame that never ends, split batches, stale idles, late
 * echoes and HTTP failures of creates, archives, sends, lists and streams (see `CmaFaultPlan`). Ids and timestamps are deterministic per emulator.
 */

/** Options of `startCmaEmulator`. */
export interface CmaEmulatorOptions {
  /** Turns consumed in order, one per turn any session starts. */
  readonly script?: readonly CmaScriptTurn[];
  /** What goes wrong, and when (see `CmaFaultPlan`). Default: nothing. */
  readonly faults?: CmaFaultPlan;
  /** When set, requests must carry this key (`x-api-key` or `Authorization: Bearer`), else 401. */
  readonly apiKey?: string;
  /** Default page size of list endpoints (a `limit` query wins, up to 1000). Default 100. */
  readonly pageSize?: number;
  /** Heartbeat comment interval on open streams, ms (0 = none). Default 15 000. */
  readonly heartbeatMs?: number;
  /** Listen address: loopback only. */
  readonly host?: '127.0.0.1';
  /** Port to listen on. Default 0: an ephemeral one (see `baseUrl`). */
  readonly port?: number;
}

/** A running emulator. */
export interface CmaEmulator {
  /** `http://127.0.0.1:<port>` (the API origin; paths start with `/v1`). */
  readonly baseUrl: string;
  readonly requests: readonly CmaRecordedRequest[];
  /** Sessions by id. */
  readonly sessions: ReadonlyMap<string, CmaEmulatorSession>;
  /** Agents and environments by id (verbatim resource objects). */
  readonly agents: ReadonlyMap<string, CmaWireEvent>;
  readonly environments: ReadonlyMap<string, CmaWireEvent>;
  /**
   * Creates a session whose history already holds `events` (ids and timestamps added where
   * missing); custom tool uses named by its last `requires_action` idle and not answered are what
   * the agent waits for. Returns the session id.
   */
  seedSession(events: readonly CmaWireEvent[]): string;
  /**
   * Stores a file scoped to session `sessionId`, as the service keeps what the agent writes under
   * its outputs folder (listed by `GET /v1/files?scope_id=<sessionId>`). Returns the file id.
   */
  writeOutput(sessionId: string, filename: string, bytes: Uint8Array | string): string;
  /** Resolves once `predicate` holds (checked now and after every change). Never rejects. */
  waitFor(predicate: () => boolean): Promise<void>;
  /** Resolves with the first recorded request matching `predicate` (now or later). */
  waitForRequest(predicate: (r: CmaRecordedRequest) => boolean): Promise<CmaRecordedRequest>;
  /** Stops the server and destroys every open connection (streams included). */
  close(): Promise<void>;
}

/**
 * Starts the emulator on an ephemeral port of 127.0.0.1. Async: resolves once it listens; rejects
 * only if it cannot listen. The caller owns it and must `close()` it. Request handling never
 * throws to the caller: problems become HTTP error answers like the service's.
 *
 * The parts: `CmaEmulatorState` (sessions, resources, ids, the request log), `CmaRoutes` (HTTP),
 * `CmaStreams` (SSE and frame faults) and `CmaScriptedAgent` (what a session does with inputs).
 */
export async function startCmaEmulator(opts: CmaEmulatorOptions = {}): Promise<CmaEmulator> {
  const state = new CmaEmulatorState(opts.script ?? [], opts.faults ?? {});
  const streams = new CmaStreams(state, opts.heartbeatMs ?? 15_000);
  const agent = new CmaScriptedAgent(state, streams);
  const routes = new CmaRoutes(state, streams, agent, { apiKey: opts.apiKey, pageSize: opts.pageSize ?? 100 });
  const server = createServer((req, res) => routes.serve(req, res));
  let closing = false;
  const port = await listenLoopback(server, opts.host, opts.port);

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests: state.requests,
    sessions: state.views,
    agents: state.agents,
    environments: state.environments,
    seedSession(events) {
      const s = state.newSession(state.newResourceId('agent'), state.newResourceId('env'));
      agent.seed(s, events);
      return s.id;
    },
    writeOutput: (sessionId, filename, bytes) => writeSessionOutput(state, sessionId, filename, typeof bytes === 'string' ? Buffer.from(bytes) : bytes),
    waitFor: (predicate) => state.waitFor(predicate),
    waitForRequest: async (predicate) => {
      await state.waitFor(() => state.requests.some(predicate));
      return state.requests.find(predicate)!;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (closing) {
          resolve();
          return;
        }
        closing = true;
        for (const s of state.sessions.values()) {
          clearTimeout(s.think);
          streams.stopHeartbeats(s);
        }
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
