import { Observable } from '../../../core/util/rxjs.js';
import type { AgentRxConfig } from '../../../core/config/agentrx.config.js';
import { AgentRxConfigToken } from '../../../core/config/config-tokens.js';
import { inject, injectable, optional } from '../../../core/util/inversify.js';
import { AgentRxError } from '../../../core/errors.js';
import { HttpClientFactory, LazyHttpClient } from '../../../core/http/http-client-factory.js';
import { Logger } from '../../../core/logger.js';
import type { AgentSpec, RawEvent, ToolConfirmation, ToolResult, ToolUse, TurnResult } from '../../../core/model.js';
import {
  missedSince,
  type IngestCursor,
  type KickoffOptions,
  type OpenOptions,
  type Reconnected,
  type StreamItem,
  type StreamingProvider,
} from '../../../core/plugin/agent-provider.js';
import type { HostEvent } from '../../../core/plugin/host-event.js';
import { DEFAULT_KICKOFF } from '../../../core/session/session.js';
import type { Artifacts } from '../../../core/artifacts/artifacts.js';
import type { ProvisionStore } from '../../../core/provision/provision-store.js';
import { ProvisionStoreToken } from '../../../core/provision/provision-token.js';
import type { Provisioner } from '../../../core/provision/provisioner.js';
import { CmaClient } from './cma-client.js';
import { cmaArtifacts } from './cma-files.js';
import { detachAll, isRunning, newCmaConn, releaseHeld, settledEventIds, type CmaConn } from './cma-conn.js';
import { decodeCmaEvent } from './cma-decode.js';
import { unansweredEvents, type CmaInput } from './cma-input.js';
import { blockedOnConfirmation, normalizeCmaTurn, pendingCmaToolUses } from './cma-normalize.js';
import { isCmaHandle, type CmaHandle } from './cma-provision.js';
import { CmaProvisioning, type CmaEnsured } from './cma-provisioning.js';
import type { CmaAgentHandle, CmaEnvironmentHandle } from './cma-versions.js';
import { cmaEventStream } from './cma-sse.js';
import { customToolResultEvent, defineOutcomeEvent, idOf, interruptEvent, toolConfirmationEvent, userMessageEvent } from './cma-wire.js';
import { cmaApiOrigin, CmaProviderOptions, DEFAULT_MAX_FRAME_BYTES } from './cma.config.js';

// Part of this provider's surface (what `open` returns, what `pushInput` takes): importable from here.
export { newCmaConn, type CmaConn } from './cma-conn.js';
export type { CmaInput } from './cma-input.js';

const NOT_CONFIGURED =
  "the claude-managed-agents provider is not configured: set providers['claude-managed-agents'].apiKey (and baseUrl for a non-default endpoint) in the agentrx config";

/**
 * The `claude-managed-agents` provider: Anthropic Claude Managed Agents runs the agent loop
 * server-side and streams events over SSE; custom tools arrive as `agent.custom_tool_use`, are run
 * locally by the Session, and are answered with exactly one `user.custom_tool_result` each.
 *
 * - `provision` creates (or recovers by content-addressed name) an environment and an agent;
 *   `teardown` archives what it created.
 * - `open` creates a session (or checks that a resumed one exists); `stream` attaches the SSE
 *   stream (idle timeout between chunks, heartbeats count); `pushInput` POSTs user events.
 * - `reconnect` (after a drop, or on a resume) lists the whole history, returns what the Session
 *   has not ingested and the custom tool uses no result answers. On a resume the history up to its
 *   last turn boundary is already settled: it is not replayed as turns; only its unanswered tool
 *   uses are redriven.
 * - `interrupt` sends `user.interrupt` and closes the conn's streams.
 *
 * One instance serves every session: it holds only the options and the HTTP client. Everything
 * per session (stream attachments, the resume gate, the text-delta tracker) lives in the
 * `CmaConn`, created by `open` and released by `close`.
 *
 * Options are injected `@optional()`: when the section is absent or invalid the provider still
 * loads (so a config selecting another provider works) and every call that needs the service
 * rejects with `invalid_config`.
 */
@injectable()
export class CmaAgentProvider implements StreamingProvider<CmaConn, CmaInput> {
  /** Provider id: the config's `provider` value and section key. */
  readonly id = 'claude-managed-agents';
  /** A long-lived SSE stream; inputs are POSTed out of band. */
  readonly mode = 'streaming' as const;
  /** Outcomes are sent as `user.define_outcome`. */
  readonly supportsOutcomes = true;

  private readonly client: CmaClient | undefined;
  private readonly provisioning: CmaProvisioning | undefined;
  private readonly idleTimeoutMs: number;
  /**
   * The custom tool uses each `requires_action` idle asks for, by idle event, as `decode` found
   * them in its session's conn (a use may have come in an earlier turn): `normalize` lists them in
   * the idle's turn. Keyed by the event objects, so an entry goes with its event and no session
   * sees another's.
   */
  private readonly askedUses = new WeakMap<RawEvent, readonly ToolUse[]>();

  /**
   * Built once by the container. Never throws and does no I/O: without valid options (the section
   * absent or invalid) it builds no HTTP client and every call needing one rejects later.
   * `config` supplies `limits.streamIdleTimeoutMs` when the section sets no idle timeout;
   * `provisionStore` remembers provisioned versions and tags (a memory store of its own when unbound).
   */
  constructor(
    @inject(CmaProviderOptions) @optional() private readonly options: CmaProviderOptions | undefined,
    @inject(HttpClientFactory) private readonly httpClientFactory: HttpClientFactory,
    @inject(Logger) private readonly logger: Logger,
    @inject(AgentRxConfigToken) @optional() config?: AgentRxConfig,
    @inject(ProvisionStoreToken) @optional() provisionStore?: ProvisionStore,
  ) {
    this.idleTimeoutMs = options?.streamIdleTimeoutMs ?? config?.limits?.streamIdleTimeoutMs ?? 300_000;
    if (options && options.apiKey && typeof options.apiKey.reveal === 'function' && !options.apiKey.isEmpty) {
      // Made at the first request: axios loads then.
      const http = new LazyHttpClient(httpClientFactory, {
        baseURL: cmaApiOrigin(options.baseUrl),
        headers: {
          'x-api-key': options.apiKey.reveal(),
          'anthropic-version': options.anthropicVersion,
          'anthropic-beta': options.beta,
          'content-type': 'application/json',
        },
        timeoutMs: options.requestTimeoutMs,
      });
      this.client = new CmaClient(http, options, logger, httpClientFactory);
      this.provisioning = new CmaProvisioning(this.client, options, provisionStore, logger);
    }
  }

  // ── provisioning ───────────────────────────────────────────────────────────────────────────

  /**
   * Creates (or recovers) the environment and the agent for `spec` — skipped for ids set in the
   * options; with `agent: '<name>:<tag>'` the agent is the stored version the tag points at — and
   * returns a `CmaHandle`. The provision store is asked first (a hit makes no host call). Rejects
   * with `invalid_config` when unconfigured, `unknown_tag`/`unknown_version` for a tag that
   * resolves to nothing, else with the control plane's AgentRxError (`resource_archived`,
   * `name_conflict` for a 409 that cannot be adopted).
   */
  async provision(spec: AgentSpec, signal: AbortSignal): Promise<CmaHandle> {
    return this.requireProvisioning().provision(spec, signal);
  }

  /** Archives the agent and the environment `handle` provisioned (a 404 counts as done), evicting each from the store once archived. */
  async teardown(handle: unknown, signal: AbortSignal): Promise<void> {
    await this.requireProvisioning().teardown(handle, signal);
  }

  /** The agent version of `spec`: its handle (`agentId`, `agentName`) and digest. */
  ensureAgent(spec: AgentSpec, signal: AbortSignal): Promise<CmaEnsured<CmaAgentHandle>> {
    return this.requireProvisioning().ensureAgent(spec, signal);
  }

  /** The environment version of the configured environment: its handle (`environmentId`, `environmentName`) and digest. */
  ensureEnvironment(spec: AgentSpec, signal: AbortSignal): Promise<CmaEnsured<CmaEnvironmentHandle>> {
    return this.requireProvisioning().ensureEnvironment(spec, signal);
  }

  /** The provisioner of this provider's environments and agents (list, tag, resolve, prune, teardown). Throws `invalid_config` when unconfigured. */
  versioned(): Provisioner {
    return this.requireProvisioning().provisioner;
  }

  // ── sessions ───────────────────────────────────────────────────────────────────────────────

  /**
   * Creates a session for the provisioned agent (provisioning first when no handle is given), or,
   * with `opts.sessionId`, checks that the session exists and returns a resumed conn whose live
   * events are held until the first `reconnect`. Does not attach a stream.
   */
  async open(opts: OpenOptions): Promise<CmaConn> {
    const client = this.requireClient();
    if (opts.sessionId !== undefined) {
      const s = await client.getSession(opts.sessionId, opts.signal);
      return newCmaConn(typeof s['id'] === 'string' ? s['id'] : opts.sessionId, true);
    }
    const handle = isCmaHandle(opts.handle) ? opts.handle : await this.provision(opts.spec, opts.signal);
    const session = await client.createSession({ agent: handle.agentId, environment_id: handle.environmentId }, opts.signal);
    if (typeof session['id'] !== 'string') throw new AgentRxError('provider_error', 'creating a session answered without an id');
    return newCmaConn(session['id'], false);
  }

  /** The session id of `conn` (synchronous, never throws). */
  sessionId(conn: CmaConn): string {
    return conn.sessionId;
  }

  /** Whether `conn` resumed an existing session (synchronous, never throws). */
  resumed(conn: CmaConn): boolean {
    return conn.resumed;
  }

  // ── inputs ─────────────────────────────────────────────────────────────────────────────────

  /**
   * The kickoff: `user.message` with the prompt; with an outcome, `user.define_outcome` (preceded
   * by the prompt as a `user.message` when one was given).
   */
  kickoffInput(opts: KickoffOptions): CmaInput {
    if (!opts.outcome) return { kind: 'send', events: [userMessageEvent(opts.prompt ?? DEFAULT_KICKOFF)] };
    const outcome = defineOutcomeEvent(opts.outcome);
    return { kind: 'send', events: opts.prompt !== undefined ? [userMessageEvent(opts.prompt), outcome] : [outcome] };
  }

  /** A follow-up `user.message`. */
  userInput(text: string): CmaInput {
    return { kind: 'send', events: [userMessageEvent(text)] };
  }

  /** One `user.custom_tool_result` per tool use, in call order (`is_error` as returned). */
  resumeInput(toolUses: readonly ToolUse[], results: readonly ToolResult[]): CmaInput {
    const byId = new Map(results.map((r) => [r.toolUseId, r]));
    const ordered = toolUses.map((u) => byId.get(u.id)).filter((r): r is ToolResult => r !== undefined);
    return { kind: 'results', events: ordered.map(customToolResultEvent) };
  }

  /**
   * One `user.tool_confirmation` per decision (`allow`/`deny`, with `deny_message` on a deny),
   * after the tool results of `results` when given: one post answers a mixed `requires_action`.
   */
  confirmationInput(decisions: readonly ToolConfirmation[], results?: CmaInput): CmaInput {
    const confirmations = decisions.map((d) => toolConfirmationEvent(d.toolUseId, d.allow ? 'allow' : 'deny', d.denyMessage));
    return { kind: 'results', events: [...(results?.events ?? []), ...confirmations] };
  }

  /** One raw user event, verbatim (e.g. `user.tool_confirmation`). */
  rawInput(event: RawEvent): CmaInput {
    return { kind: 'send', events: [{ ...event }] };
  }

  /**
   * POSTs the input's events. Tool results survive an ambiguous failure: the history is checked
   * and only results it lacks are re-sent. Rejects with the client's AgentRxError (or
   * `session_closed` after `close`).
   */
  async pushInput(conn: CmaConn, input: CmaInput, signal: AbortSignal): Promise<void> {
    const client = this.requireClient();
    if (conn.closed) throw new AgentRxError('session_closed', 'the claude-managed-agents session is closed');
    await client.sendEvents(conn.sessionId, input.events, signal, unansweredEvents(input));
  }

  // ── the stream ─────────────────────────────────────────────────────────────────────────────

  /**
   * Attaches the event stream: `{kind:'open'}` once the service answered 2xx, then events and
   * diagnostics (bad frames). Errors on a drop, an idle timeout or a clean close before a
   * terminal. On a resumed conn, events are held until the first `reconnect` and events of the
   * settled history are never emitted. Unsubscribing aborts the request.
   */
  stream(conn: CmaConn): Observable<StreamItem> {
    return new Observable<StreamItem>((subscriber) => {
      let client: CmaClient;
      try {
        client = this.requireClient();
      } catch (e) {
        subscriber.error(e);
        return undefined;
      }
      if (conn.closed) {
        subscriber.error(new AgentRxError('session_closed', 'the claude-managed-agents session is closed'));
        return undefined;
      }
      const held: RawEvent[] = [];
      const emit = (event: RawEvent): void => {
        const id = idOf(event);
        if (id !== undefined && conn.old?.has(id)) return;
        subscriber.next({ kind: 'event', event });
      };
      const flush = (): void => {
        for (const ev of held.splice(0)) emit(ev);
      };
      conn.flushers.add(flush);
      const inner = cmaEventStream((signal) => client.openEventStream(conn.sessionId, { signal, eventDeltas: this.options!.eventDeltas }), {
        idleTimeoutMs: this.idleTimeoutMs,
        maxFrameBytes: this.options!.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES,
        target: `GET ${client.streamPathOf(conn.sessionId)}`,
      }).subscribe({
        next: (item) => {
          if (item.kind !== 'event') subscriber.next(item);
          else if (conn.gated) held.push(item.event);
          else emit(item.event);
        },
        error: (e: unknown) => subscriber.error(e),
        complete: () => subscriber.complete(),
      });
      conn.attachments.add(inner);
      return () => {
        conn.flushers.delete(flush);
        conn.attachments.delete(inner);
        inner.unsubscribe();
      };
    });
  }

  /**
   * Called after the Session re-attached the stream (a drop) or attached it (a resume): lists the
   * whole history (every page) and returns the events the Session has not ingested (`missed`,
   * oldest first; the settled history of a resume excluded) and the custom tool uses an idle asked
   * for that no result answers (`pending`). On a resume this also releases the held live events.
   * Rejects with the client's AgentRxError (the Session retries with backoff).
   */
  async reconnect(conn: CmaConn, cursor: IngestCursor, signal: AbortSignal): Promise<Reconnected> {
    const client = this.requireClient();
    const history = await client.listAllEvents(conn.sessionId, signal);
    if (conn.resumed && conn.old === undefined) conn.old = settledEventIds(history);
    const old = conn.old;
    const missed = missedSince(old ? history.filter((e) => !old.has(idOf(e) ?? '')) : history, cursor, idOf);
    const pending = pendingCmaToolUses(history);
    const confirmations = blockedOnConfirmation(history);
    releaseHeld(conn);
    return { missed, pending, ...(confirmations.length > 0 ? { confirmations } : {}), midTurn: isRunning(history) };
  }

  /** Sends `user.interrupt` (best effort is the caller's call: rejects on failure) and closes the conn's streams. */
  async interrupt(conn: CmaConn, signal: AbortSignal): Promise<void> {
    const client = this.requireClient();
    detachAll(conn);
    await client.sendEvents(conn.sessionId, [interruptEvent()], signal);
  }

  // ── normalization ──────────────────────────────────────────────────────────────────────────

  /**
   * See `normalizeCmaTurn`; a `requires_action` idle's uses that came in an earlier turn of its
   * session (a batch split across idles) are taken from what `decode` saw of it.
   */
  normalize(events: readonly RawEvent[]): TurnResult {
    return normalizeCmaTurn(events, (idle) => this.askedUses.get(idle));
  }

  /**
   * What one event says to the Session (see `decodeCmaEvent`): text, tool uses and their answers,
   * host-run tools' results, turn ends. Text previews are joined by the conn's own tracker, so
   * sessions never evict or answer for each other's previews; the conn also tracks the custom
   * tool uses each idle asks for (see `normalize`). Synchronous; never throws.
   */
  decode(conn: CmaConn, event: RawEvent): readonly HostEvent[] {
    const asked = conn.batches.observe(event);
    if (asked) this.askedUses.set(event, asked);
    return decodeCmaEvent(conn.deltas, event);
  }

  /** The event's `id`. */
  eventId(event: RawEvent): string | undefined {
    return idOf(event);
  }

  /**
   * Closes the conn's streams and forgets its unfinished previews; later `stream`/`pushInput`
   * calls fail with `session_closed`. The session itself is kept (resumable).
   */
  close(conn: CmaConn): void {
    conn.closed = true;
    detachAll(conn);
    conn.deltas.clear();
    conn.batches.clear();
  }

  /**
   * The session's files through the Files API (see `CmaArtifacts`; the outputs folder convention
   * is `CMA_OUTPUTS_FOLDER`). Throws `invalid_config` when the provider is not configured.
   */
  artifacts(sessionId: string): Artifacts {
    return cmaArtifacts(this.options, this.httpClientFactory, this.logger, sessionId);
  }

  private requireProvisioning(): CmaProvisioning {
    this.requireClient();
    return this.provisioning!;
  }

  private requireClient(): CmaClient {
    if (!this.client) throw new AgentRxError('invalid_config', NOT_CONFIGURED);
    return this.client;
  }
}
