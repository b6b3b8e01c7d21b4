import { inspect } from 'node:util';
import type { HarnessContentBlock, HarnessMessage, HarnessToolUseBlock } from '@aws-sdk/client-bedrock-agentcore';
import type { BedrockAgentCoreControlClient } from '@aws-sdk/client-bedrock-agentcore-control';
import { Observable } from '../../../core/util/rxjs.js';
import { inject, injectable, optional } from '../../../core/util/inversify.js';
import type { ProvisionStore } from '../../../core/provision/provision-store.js';
import { ProvisionStoreToken } from '../../../core/provision/provision-token.js';
import type { Provisioner } from '../../../core/provision/provisioner.js';
import { AgentRxError } from '../../../core/errors.js';
import { Logger } from '../../../core/logger.js';
import { NO_RESULT_TEXT, type AgentSpec, type RawEvent, type ToolResult, type ToolUse, type TurnResult } from '../../../core/model.js';
import type { KickoffOptions, OpenOptions, TurnProvider } from '../../../core/plugin/agent-provider.js';
import { NO_HOST_EVENTS, type HostEvent } from '../../../core/plugin/host-event.js';
import type { LifecycleParticipant } from '../../../core/plugin/lifecycle-participant.js';
import { createControlClient, createDataClient } from './agentcore-clients.js';
import { ATTEMPT_FAILED, AgentCoreInvoker, rawTextOf, replayAwareEmit, type AgentCoreDataPlane } from './agentcore-invoke.js';
import { loadDataSdk } from './agentcore-sdk.js';
import { agentCoreArtifacts, type Artifacts } from './agentcore-storage.js';
import type { AgentCoreProvisioner, AgentCoreHarnessHandle } from './agentcore-provisioner.js';
import { AgentCoreProvisioning, controlProvisioner, type AgentCoreEnsured } from './agentcore-provisioning.js';
import { AgentCoreProviderOptions } from './agentcore.config.js';
import { invokeInput, sessionSettingsOf } from './agentcore-harness-input.js';
import { ConverseAssembler } from './converse-assembler.js';
import { newRuntimeSessionId, validateRuntimeSessionId } from './runtime-session-id.js';

/** Input of one `pollTurn`: the delta of Converse messages sent by one `InvokeHarness`. */
export interface AgentCoreInput {
  /** Converse messages, oldest first; never empty when sent. */
  readonly messages: readonly HarnessMessage[];
}

/** Per-session state of the `bedrock-agentcore` provider. Opaque to the Session; holds no credentials. */
export interface AgentCoreConn {
  /** The runtime session id (`X-Amzn-Bedrock-AgentCore-Runtime-Session-Id`): the harness keeps the history under it. */
  readonly sessionId: string;
  /** True when `open` was given an existing runtime session id. */
  readonly resumed: boolean;
  /** The harness every invoke of this session goes to. */
  readonly harnessArn: string;
  /** The session's signal: aborting it aborts the in-flight invoke. */
  readonly signal: AbortSignal;
  /** Controllers of the polls in flight (aborted by `close`). */
  readonly inflight: Set<AbortController>;
  /** Set by `close`; later polls fail with `session_closed`. */
  closed: boolean;
  /**
   * Text deltas of this session's retried attempts, by event, as consumers should see them
   * (`decode`): consumers already saw a failed attempt's text, so a retry that repeats it shows
   * only what is new (or nothing, `''`). Weakly keyed: an entry goes with its event.
   */
  readonly textOverrides: WeakMap<RawEvent, string>;
  /** The session's own settings (model, system prompt, sampling), sent with every invoke. */
  readonly settings: NonNullable<OpenOptions['settings']>;
  /** The model id sampling settings go with: the session's, the config's, else the spec's. */
  readonly modelId: string | undefined;
}

export { ATTEMPT_FAILED, STREAM_EXCEPTION, type AgentCoreSyntheticEvent } from './agentcore-invoke.js';

const END_TURN = new Set(['end_turn', 'stop_sequence']);

/**
 * The `bedrock-agentcore` provider: AWS Bedrock AgentCore Harness runs the agent loop server
 * side, turn by turn. Each turn is one signed `InvokeHarness` (official AWS SDK client) that
 * sends only the delta — the kickoff or user text, or the resume pair (assistant `toolUse`
 * blocks + user `toolResult` blocks) — and streams the answer back as event-stream frames,
 * emitted live as raw events. Client tools are `inline_function` tools; a `tool_use` stop hands
 * them to the Session.
 *
 * Retries (`AgentCoreInvoker`): an invoke has no idempotency token and cannot be rejoined, so
 * the whole invoke is sent again only after a transport error, HTTP 5xx/429, an idle timeout, a
 * truncated stream (no `messageStop`) or a frame agentrx could not decode (bad checksum, payload
 * that is not JSON — wherever in the stream), with jittered exponential backoff — never after an
 * exception frame or another 4xx. What the harness reported (`harness_stream_error`,
 * `details.origin: 'host'`) is never confused with what agentrx could not decode
 * (`stream_error`, `details.origin: 'decode'`). Events of a failed attempt have already been emitted (raw events are never
 * dropped, and their text deltas reached consumers live); an `agentcore.attempt_failed` marker
 * follows them, and `normalize` counts text, tool uses, stop reason and usage only after the last
 * marker, so a failed attempt is never counted in the result or the usage. After the last
 * attempt a truncated stream fails with `early_termination`, an idle stream with `timeout`,
 * an HTTP failure with `http_error`.
 *
 * One instance serves every session: it holds the options and the SDK clients. Per-session state
 * (the runtime session id, in-flight invokes, the retry text overrides) lives in the
 * `AgentCoreConn`.
 */
@injectable()
export class AgentCoreAgentProvider implements TurnProvider<AgentCoreConn, AgentCoreInput>, LifecycleParticipant {
  /** Provider id (config `provider: 'bedrock-agentcore'`). */
  readonly id = 'bedrock-agentcore';
  /** One signed invoke per turn. */
  readonly mode = 'request_response' as const;
  /** AgentCore has no outcome grading. */
  readonly supportsOutcomes = false;
  /** InvokeHarness overrides the harness's model (with its sampling), system prompt and maxTokens per call. */
  readonly runSettings: TurnProvider['runSettings'] = ['model', 'instructions', 'temperature', 'topP', 'maxOutputTokens'];

  /** The data plane once created (the SDK is imported on first use); a failed creation is not kept. */
  private data: Promise<AgentCoreDataPlane> | undefined;
  private control: Promise<BedrockAgentCoreControlClient> | undefined;
  /** Clients created so far, for `stop` (which is synchronous). */
  private readonly created = new Set<{ destroy(): void }>();
  private readonly invoker: AgentCoreInvoker;
  private versions: AgentCoreProvisioning | undefined;

  /**
   * Cheap and synchronous (DI registration and construction never touch the AWS SDK, which is
   * an optional dependency): the SDK is imported and the clients are built at the first call that
   * needs them — `open`, `provision`, `teardown` — which rejects with `invalid_config` saying what
   * to install when the SDK is missing. `provisionStore` remembers provisioned harnesses and tags
   * (a memory store of its own when unbound).
   */
  constructor(
    @inject(AgentCoreProviderOptions) private readonly options: AgentCoreProviderOptions,
    @inject(Logger) private readonly logger: Logger,
    @inject(ProvisionStoreToken) @optional() private readonly provisionStore?: ProvisionStore,
  ) {
    this.invoker = new AgentCoreInvoker(options, logger, () => this.dataPlane());
  }

  /**
   * With `harnessArn` configured: that harness, no control-plane call. With `harness:
   * '<name>:<tag>'`: the stored harness the tag points at. Otherwise the harness version of `spec`
   * from the provision store, else created (or adopted by name) and waited for until READY (see
   * `AgentCoreProvisioner`); needs `executionRoleArn`, else `invalid_config`.
   */
  async provision(spec: AgentSpec, signal: AbortSignal): Promise<AgentCoreHarnessHandle> {
    if (this.options.harnessArn !== undefined) return { harnessArn: this.options.harnessArn, created: false };
    return this.provisioning().provision(spec, signal);
  }

  /** Deletes a harness that `provision` created (evicting it from the store once deleted); a configured, tagged or adopted one is left alone. */
  async teardown(handle: unknown, signal: AbortSignal): Promise<void> {
    if (!isHandle(handle) || handle.harnessId === undefined) return;
    await this.provisioning().teardown(handle, signal);
  }

  /** The harness version of `spec` (store, then control plane): its handle and digest. */
  ensureHarness(spec: AgentSpec, signal: AbortSignal): Promise<AgentCoreEnsured> {
    return this.provisioning().ensureHarness(spec, signal);
  }

  /** The provisioner of this provider's harnesses (list, tag, resolve, prune, teardown). */
  versioned(): Provisioner {
    return this.provisioning().provisioner;
  }

  private provisioning(): AgentCoreProvisioning {
    this.versions ??= new AgentCoreProvisioning(this.provisioner(), this.options, this.provisionStore, this.logger);
    return this.versions;
  }

  /** The provisioner over this provider's control-plane client (also for listing harnesses). */
  provisioner(): AgentCoreProvisioner {
    // The provisioner's client sends through the lazily built SDK client.
    return controlProvisioner(
      this.options,
      async (command, options) => (await this.controlClient()).send(command as Parameters<BedrockAgentCoreControlClient['send']>[0], options ?? {}),
      this.logger,
    );
  }

  /**
   * Builds the conn: the harness from the provisioned handle (else `harnessArn`), the runtime
   * session id `opts.sessionId` (a resume; validated) or a fresh one. Makes no network call;
   * fails fast with `invalid_config` without a harness or a region, `invalid_options` for a bad
   * session id.
   */
  async open(opts: OpenOptions): Promise<AgentCoreConn> {
    if (opts.signal.aborted) throw new AgentRxError('cancelled', 'The session was cancelled before it opened');
    const harnessArn = isHandle(opts.handle) ? opts.handle.harnessArn : this.options.harnessArn;
    if (harnessArn === undefined) {
      throw new AgentRxError(
        'invalid_config',
        'bedrock-agentcore: no harness to invoke: set providers.bedrock-agentcore.harnessArn, or executionRoleArn so that provision creates one',
        {
          path: 'providers.bedrock-agentcore.harnessArn',
        },
      );
    }
    const { settings, modelId } = sessionSettingsOf(opts, this.options);
    const sessionId = opts.sessionId !== undefined ? validateRuntimeSessionId(opts.sessionId) : newRuntimeSessionId();
    await this.dataPlane();
    return {
      sessionId,
      resumed: opts.sessionId !== undefined,
      harnessArn,
      signal: opts.signal,
      inflight: new Set(),
      closed: false,
      textOverrides: new WeakMap(),
      settings,
      modelId,
    };
  }

  /** The runtime session id. */
  sessionId(conn: AgentCoreConn): string {
    return conn.sessionId;
  }

  /** True when `open` was given an existing runtime session id. */
  resumed(conn: AgentCoreConn): boolean {
    return conn.resumed;
  }

  /** `[{role:'user', content:[{text: prompt}]}]` (outcomes are unsupported; the Session rejects them first). */
  kickoffInput(opts: KickoffOptions): AgentCoreInput {
    return this.userInput(opts.prompt ?? 'Begin.');
  }

  /** One user text message. */
  userInput(text: string): AgentCoreInput {
    return { messages: [{ role: 'user', content: [{ text }] }] };
  }

  /**
   * The strict resume pair: the assistant message echoing each `toolUse` (the harness does not
   * persist the uncommitted tool-use turn), then the user message with one `toolResult` per use
   * (`status` success/error), in use order, each id once. A use without a result is answered
   * with an error result; an empty result text becomes `(no output)` (Converse rejects blank
   * text blocks).
   */
  resumeInput(toolUses: readonly ToolUse[], results: readonly ToolResult[]): AgentCoreInput {
    const seen = new Set<string>();
    const uses = toolUses.filter((u) => !seen.has(u.id) && seen.add(u.id));
    if (uses.length === 0) return { messages: [] };
    const byId = new Map<string, ToolResult>();
    for (const r of results) if (!byId.has(r.toolUseId)) byId.set(r.toolUseId, r);
    return {
      messages: [
        {
          role: 'assistant',
          content: uses.map((u): HarnessContentBlock => ({
            toolUse: { toolUseId: u.id, name: u.name, input: { ...u.input } as HarnessToolUseBlock['input'] },
          })),
        },
        {
          role: 'user',
          content: uses.map((u) => {
            const r = byId.get(u.id);
            const text = r ? (r.content === '' ? '(no output)' : r.content) : NO_RESULT_TEXT;
            return { toolResult: { toolUseId: u.id, content: [{ text }], status: r && !r.isError ? ('success' as const) : ('error' as const) } };
          }),
        },
      ],
    };
  }

  /**
   * Runs one turn: one `InvokeHarness` (retried as described on the class), emitting every
   * decoded Converse event as it arrives, then completing after a `messageStop`. Errors with
   * `harness_stream_error` (an exception frame, `details.exceptionType`/`message`, `origin:
   * 'host'`), `stream_error` (frames that could not be decoded, after the last attempt; `origin:
   * 'decode'`), `http_error`
   * (4xx at once; 5xx/429 after the last attempt), `early_termination`, `timeout` (idle), or the
   * session's abort reason. Unsubscribing aborts the request (the socket is closed).
   */
  pollTurn(conn: AgentCoreConn, input: AgentCoreInput): Observable<RawEvent> {
    return new Observable<RawEvent>((subscriber) => {
      if (conn.closed) {
        subscriber.error(new AgentRxError('session_closed', 'The bedrock-agentcore session is closed'));
        return undefined;
      }
      if (input.messages.length === 0) {
        subscriber.error(new AgentRxError('unresolved_requires_action', 'bedrock-agentcore: refusing to send an invoke without messages'));
        return undefined;
      }
      const controller = new AbortController();
      const onSessionAbort = (): void => controller.abort(conn.signal.reason);
      if (conn.signal.aborted) controller.abort(conn.signal.reason);
      else conn.signal.addEventListener('abort', onSessionAbort, { once: true });
      conn.inflight.add(controller);
      let finished = false;
      const release = (): void => {
        conn.signal.removeEventListener('abort', onSessionAbort);
        conn.inflight.delete(controller);
      };
      const emit = (ev: RawEvent): void => {
        if (!subscriber.closed) subscriber.next(ev);
      };
      this.invoker.invoke(invokeInput(this.options, conn, input), controller.signal, replayAwareEmit(conn.textOverrides, emit)).then(
        () => {
          finished = true;
          release();
          subscriber.complete();
        },
        (e: unknown) => {
          finished = true;
          release();
          if (!subscriber.closed) subscriber.error(e);
        },
      );
      return () => {
        release();
        if (!finished) controller.abort(new AgentRxError('cancelled', 'The turn was unsubscribed'));
      };
    });
  }

  /**
   * Folds a turn: only the events after the last `agentcore.attempt_failed` marker count.
   * `end_turn`/`stop_sequence` → `end_turn`; `tool_use` → `requires_action` with the custom
   * tool uses; anything else (`max_tokens`, `max_iterations_exceeded`, `timeout_exceeded`, …, or
   * no `messageStop`) → `terminated` with the raw reason. Usage from `metadata.usage`. `events`
   * keeps every raw event of the turn, failed attempts included.
   */
  normalize(events: readonly RawEvent[]): TurnResult {
    let from = 0;
    events.forEach((e, i) => {
      if (e['type'] === ATTEMPT_FAILED) from = i + 1;
    });
    const asm = new ConverseAssembler();
    for (const e of events.slice(from)) asm.add(e);
    const stopReason = asm.stopReason;
    const terminal: TurnResult['terminal'] =
      stopReason === 'tool_use' ? 'requires_action' : stopReason !== undefined && END_TURN.has(stopReason) ? 'end_turn' : 'terminated';
    return {
      terminal,
      stopReason,
      text: asm.text,
      customToolUses: terminal === 'requires_action' ? asm.customToolUses() : [],
      serverToolUses: asm.serverToolUses(),
      usage: asm.usage,
      events: [...events],
    };
  }

  /**
   * The text of a `contentBlockDelta` with `delta.text`, as it streams; for an event of a retried
   * attempt, only the text the failed attempts did not already show (see `conn.textOverrides`).
   * Nothing else of a Converse event concerns the Session. Synchronous; never throws.
   */
  decode(conn: AgentCoreConn, event: RawEvent): readonly HostEvent[] {
    const text = conn.textOverrides.get(event) ?? rawTextOf(event);
    return text !== undefined && text !== '' ? [{ kind: 'text', text }] : NO_HOST_EVENTS;
  }

  /** Converse events carry no ids and are never replayed: nothing to dedupe. */
  eventId(_event: RawEvent): string | undefined {
    return undefined;
  }

  /** Aborts the in-flight invoke; later polls fail with `session_closed`. */
  close(conn: AgentCoreConn): void {
    conn.closed = true;
    for (const c of conn.inflight) c.abort(new AgentRxError('session_closed', 'The bedrock-agentcore session was closed'));
    conn.inflight.clear();
  }

  /** The session's files in the harness's session storage (see `AgentCoreArtifacts`). */
  artifacts = (sessionId: string, handle?: unknown): Artifacts => agentCoreArtifacts(this.options, sessionId, handle, () => this.dataPlane());

  /** Kernel stop: releases the SDK clients' sockets. */
  stop(): void {
    for (const c of this.created) c.destroy();
    this.created.clear();
    this.data = undefined;
    this.control = undefined;
  }

  /** Shows the id and the (redacted) options only. */
  [inspect.custom](): string {
    return `AgentCoreAgentProvider ${inspect({ id: this.id, options: this.options })}`;
  }

  // ── the invoke ──────────────────────────────────────────────────────────────────────────────

  /** The data-plane client and SDK, imported and built once (a failure is not cached: the next call tries again). */
  private dataPlane(): Promise<AgentCoreDataPlane> {
    this.data ??= (async () => {
      const sdk = await loadDataSdk();
      const client = await createDataClient(this.options, process.env, sdk);
      this.created.add(client);
      return { client, sdk };
    })().catch((e: unknown) => {
      this.data = undefined;
      throw e;
    });
    return this.data;
  }

  /** The control-plane client, imported and built once (a failure is not cached). */
  private controlClient(): Promise<BedrockAgentCoreControlClient> {
    this.control ??= createControlClient(this.options)
      .then((client) => {
        this.created.add(client);
        return client;
      })
      .catch((e: unknown) => {
        this.control = undefined;
        throw e;
      });
    return this.control;
  }
}

function isHandle(h: unknown): h is AgentCoreHarnessHandle {
  return typeof h === 'object' && h !== null && typeof (h as { harnessArn?: unknown }).harnessArn === 'string';
}
