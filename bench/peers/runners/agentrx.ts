/**
 * agentrx: one AgentRx instance per process (Local provider, streaming, the tools as class-validator
 * DTO classes: agentrx-dto-tools.ts), no terminal consumer,
 * the JSON-lines consumer writing to a null stream (as in every earlier run) and a consumer that
 * keeps what each session delivered (its text deltas and tool results, read back after
 * `rx.run()`), `rx.run()` per session. agentrx is the built package (`import 'agentrx'`).
 * `reflect-metadata` is imported by the DTO tools' module, as a user with decorated classes does
 * (agentrx loads its lite build itself; a runner whose tools have no decorators needs nothing).
 */
import { Writable } from 'node:stream';
// The package as users get it (dist/, through package.json's exports: `npm run bench` builds it).
import { AgentRx, JsonlConsumer, type AgentRxCreateOptions, type AgUiEvent, type ConsumerContext, type EventConsumer } from 'agentrx';
import { SYSTEM_PROMPT, USER_PROMPT } from '../shared.js';
import type { SessionOutcome, Setup } from './types.js';

/**
 * What each session delivered to consumers, by thread: the text of its last text message
 * (concatenated from TEXT_MESSAGE_CONTENT deltas) and its TOOL_CALL_RESULT contents. The runner
 * takes a session's entry out once `rx.run()` resolved (every consumer has stopped by then).
 */
export class DeliveredConsumer implements EventConsumer {
  readonly id = 'bench-delivered';
  private readonly byThread = new Map<string, { text: string; messageId: string; toolResults: { id: string; output: unknown }[] }>();

  onEvent(ev: AgUiEvent, ctx: ConsumerContext): void {
    let d = this.byThread.get(ctx.threadId);
    if (!d) this.byThread.set(ctx.threadId, (d = { text: '', messageId: '', toolResults: [] }));
    if (ev.type === 'TEXT_MESSAGE_START') {
      d.text = '';
      d.messageId = ev.messageId;
    } else if (ev.type === 'TEXT_MESSAGE_CONTENT') {
      if (ev.messageId !== d.messageId) {
        d.text = '';
        d.messageId = ev.messageId;
      }
      d.text += ev.delta;
    } else if (ev.type === 'TOOL_CALL_RESULT') {
      d.toolResults.push({ id: ev.toolCallId, output: ev.content });
    }
  }

  /** The outcome delivered for `threadId`, removed from this consumer. */
  take(threadId: string): SessionOutcome {
    const d = this.byThread.get(threadId);
    this.byThread.delete(threadId);
    return { text: d?.text ?? '', toolResults: d?.toolResults ?? [] };
  }
}

/** A Writable that drops everything. */
export function nullStream(): Writable {
  return new Writable({
    write(_chunk, _enc, cb) {
      cb();
    },
  });
}

/** A `store` section for the bench's instance (the file store's folder, the memory store's bounds…). */
export type BenchStore = { readonly type: string } & Readonly<Record<string, unknown>>;

/** The tools of a bench instance: `AgentRx.create`'s `tools`. */
export type BenchTools = NonNullable<AgentRxCreateOptions['tools']>;

/**
 * The consumers of a bench instance: `all` (the JSON-lines consumer to a null stream and the
 * delivered-outcome consumer, as in every run since run B), `delivered` (that one only) or `none`
 * (a session's outcome is read from `rx.run()`'s result: its text and the transcript's tool
 * messages).
 */
export type BenchConsumers = 'all' | 'delivered' | 'none';

/** How a bench instance is made besides its store: the tools, whether they say they are idempotent, its consumers. */
export interface BenchOptions {
  readonly idempotent?: boolean;
  readonly tools?: BenchTools;
  readonly consumers?: BenchConsumers;
}

/** A bench instance and the consumer its sessions' outcomes are read from (none: from the result). */
export interface BenchAgentRx {
  readonly rx: AgentRx;
  readonly delivered: DeliveredConsumer | undefined;
}

/**
 * The bench's AgentRx instance (Local provider, the two tools, the consumers of `opts.consumers`,
 * default all). The tools are the DTO classes unless `opts.tools` gives others; the DTO module (and
 * with it the user's `import 'class-validator'`) loads only then.
 */
export async function createBenchAgentRx(baseUrl: string, store?: BenchStore, opts: BenchOptions = {}): Promise<BenchAgentRx> {
  const which = opts.consumers ?? 'all';
  const delivered = which === 'none' ? undefined : new DeliveredConsumer();
  const consumers: EventConsumer[] = [];
  if (which === 'all') consumers.push(new JsonlConsumer(nullStream()));
  if (delivered) consumers.push(delivered);
  const tools = opts.tools ?? (await import('./agentrx-dto-tools.js')).dtoTools(opts.idempotent ?? false);
  const rx = await AgentRx.create({
    config: {
      provider: 'local',
      retainEvents: false,
      ...(store ? { store } : {}),
      consumers: { terminal: false, queueLimit: 100_000 },
      agent: { systemPrompt: SYSTEM_PROMPT },
      providers: { local: { baseUrl, model: 'scripted' } },
    },
    tools,
    consumers,
  });
  return { rx, delivered };
}

/**
 * One session on `bench.rx`: what it delivered to the consumers (the AG-UI thread id is the
 * session id), or without consumers what its result holds (the final text, and each tool message
 * of the Local transcript as a tool result).
 */
export async function runBenchSession(bench: BenchAgentRx): Promise<SessionOutcome> {
  const r = await bench.rx.run({ prompt: USER_PROMPT });
  if (bench.delivered) return bench.delivered.take(r.sessionId ?? '');
  const toolResults = (r.transcript ?? []).flatMap((m) => {
    const msg = m as { role?: unknown; tool_call_id?: unknown; content?: unknown };
    return msg.role === 'tool' && typeof msg.tool_call_id === 'string' ? [{ id: msg.tool_call_id, output: msg.content }] : [];
  });
  return { text: r.text, toolResults };
}

/** agentrx with a store config (default: the library's memory store); `opts`: tools, idempotent, consumers. */
export async function setupWith(baseUrl: string, store?: BenchStore, opts: BenchOptions = {}): Promise<() => Promise<SessionOutcome>> {
  const bench = await createBenchAgentRx(baseUrl, store, opts);
  return () => runBenchSession(bench);
}

export const setup: Setup = (baseUrl) => setupWith(baseUrl);
