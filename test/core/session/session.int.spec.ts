import { getEventListeners } from 'node:events';
import { AgentRx, type AgentRxCreateOptions } from '../../../src/agentrx.js';
import { AgentRxError } from '../../../src/core/errors.js';
import type { ConsumerError } from '../../../src/core/session/consumer-hub.js';
import type { SessionEvent } from '../../../src/core/events/session-event.js';
import type { ProviderMode } from '../../../src/core/plugin/agent-provider.js';
import { ScriptedProvider, ev, type ScriptedTurn } from '../../../src/testing/scripted-provider.js';
import { RecordingConsumer } from '../../../src/testing/recording-consumer.js';
import {
  EchoToolHandler,
  HangingToolHandler,
  resetFakeTools,
  ThrowingToolHandler,
  RejectingToolHandler,
  MalformedToolHandler,
  AddToolHandler,
} from '../../fakes/fake-tools.js';
import { HangingConsumer, ThrowingConsumer } from '../../fakes/fake-consumers.js';
import { injectable } from '../../../src/core/util/inversify.js';
import { EchoInput } from '../../fakes/fake-tools.js';

/** A tool that runs until the test opens its gate; `started` resolves when it has begun. */
@injectable()
class GateToolHandler {
  static started: Promise<void>;
  static open: () => void;
  private static markStarted: () => void;
  static reset(): void {
    GateToolHandler.started = new Promise((r) => (GateToolHandler.markStarted = r));
    const gate = new Promise<void>((r) => (GateToolHandler.open = r));
    GateToolHandler.gate = gate;
  }
  private static gate: Promise<void>;
  readonly name = 'slow';
  readonly description = 'Waits for the test.';
  readonly inputType = EchoInput;
  async handle(input: EchoInput): Promise<string> {
    GateToolHandler.markStarted();
    await GateToolHandler.gate;
    return `slow:${input.text}`;
  }
}

const TOOLS = [GateToolHandler, EchoToolHandler, AddToolHandler, ThrowingToolHandler, RejectingToolHandler, HangingToolHandler, MalformedToolHandler];

async function create(
  provider: ScriptedProvider,
  extra: { consumers?: NonNullable<AgentRxCreateOptions['consumers']>; config?: Record<string, unknown> } = {},
): Promise<AgentRx> {
  return AgentRx.create({
    defaults: false,
    providers: [provider],
    tools: TOOLS,
    consumers: extra.consumers ?? [],
    config: { provider: provider.id, consumers: { terminal: false, handlerTimeoutMs: 30, stopTimeoutMs: 200 }, ...(extra.config ?? {}) },
  });
}

const twoTurnScript = (): ScriptedTurn[] => [
  { events: [ev.text('t1', 'Let me echo. '), ev.toolUse('u1', 'echo', { text: 'hi' }), ev.usage(10, 5, 'us1'), ev.idle('i1', 'requires_action', ['u1'])] },
  { events: [ev.text('t2', 'Done: HI'), ev.usage(20, 7, 'us2'), ev.idle('i2', 'end_turn')] },
];

describe('Session', () => {
  let rx: AgentRx | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await rx?.stop();
    rx = undefined;
  });

  describe.each<ProviderMode>(['request_response', 'streaming'])('.run in %s mode', (mode) => {
    describe('when the host asks for one tool and then ends the turn', () => {
      let provider: ScriptedProvider;
      let recorder: RecordingConsumer;
      let result: Awaited<ReturnType<AgentRx['run']>>;
      let envelopes: SessionEvent[];
      beforeEach(async () => {
        provider = new ScriptedProvider({ mode, turns: twoTurnScript() });
        recorder = new RecordingConsumer();
        rx = await create(provider, { consumers: [recorder] });
        const s = rx.start({ prompt: 'echo hi' });
        envelopes = [];
        s.events$.subscribe((e) => envelopes.push(e));
        result = await s.result;
        s.close();
        await rx.stop();
      });

      it('should end with end_turn after two turns and summed usage', () => {
        expect(result.terminal).toBe('end_turn');
        expect(result.stopReason).toBe('end_turn');
        expect(result.turns).toBe(2);
        expect(result.usage).toEqual({ inputTokens: 30, outputTokens: 12 });
        expect(result.text).toBe('Done: HI');
      });

      it('should keep the raw events verbatim and never store text deltas', () => {
        const script = twoTurnScript();
        const expected = [...script[0]!.events, ...(mode === 'streaming' ? [ev.toolResult('echo-1', 'u1')] : []), ...script[1]!.events];
        expect(result.events).toEqual(expected);
        expect(result.events.some((e) => String(e['type']).startsWith('agentrx.'))).toBe(false);
      });

      it('should call the handler once with the validated input', () => {
        expect(EchoToolHandler.calls).toHaveLength(1);
        expect(EchoToolHandler.calls[0]!.input).toBeInstanceOf(Object);
        expect(EchoToolHandler.calls[0]!.input.text).toBe('hi');
        expect(EchoToolHandler.calls[0]!.ctx.idempotencyKey).toBe('scripted-session:u1');
      });

      it('should post the tool result in the resume input', () => {
        expect(provider.inputs[0]).toEqual({ kind: 'kickoff', prompt: 'echo hi', outcome: undefined });
        expect(provider.inputs[1]).toMatchObject({ kind: 'resume', results: [{ toolUseId: 'u1', content: 'HI', isError: false }] });
        expect(provider.inputs).toHaveLength(2);
      });

      it('should number envelopes gap-free and emit each text delta right after its raw event', () => {
        expect(envelopes.map((e) => e.seq)).toEqual(envelopes.map((_, i) => i + 1));
        const i = envelopes.findIndex((e) => e.source === 'provider' && e.raw['id'] === 't1');
        expect(envelopes[i + 1]!.raw).toEqual({ type: 'agentrx.text_delta', text: 'Let me echo. ', messageId: 't1' });
      });

      it('should deliver a well-formed AG-UI run to consumers and stop them once', () => {
        expect(recorder.calls[0]).toBe('start');
        expect(recorder.events[0]!.type).toBe('RUN_STARTED');
        expect(recorder.events.at(-1)!.type).toBe('RUN_FINISHED');
        expect(recorder.events.filter((e) => e.type === 'TOOL_CALL_RESULT')).toEqual([expect.objectContaining({ toolCallId: 'u1', content: 'HI' })]);
        expect(recorder.text).toBe('Let me echo. Done: HI');
        expect(recorder.stops).toEqual(['completed']);
      });
    });
  });

  describe('.run', () => {
    describe('when tools throw, reject, hang, return garbage or get invalid input', () => {
      it('should turn each failure into an is_error result and still complete', async () => {
        const provider = new ScriptedProvider({
          turns: [
            {
              events: [
                ev.toolUse('a', 'throws'),
                ev.toolUse('b', 'rejects'),
                ev.toolUse('c', 'hangs'),
                ev.toolUse('d', 'malformed'),
                ev.toolUse('e', 'add', { a: 'x', b: 2 }),
                ev.toolUse('f', 'nope'),
                ev.toolUse('g', 'add', { a: 1, b: 2 }),
                ev.idle('i1', 'requires_action'),
              ],
            },
            { events: [ev.idle('i2', 'end_turn')] },
          ],
        });
        rx = await create(provider);
        const result = await rx.run({ prompt: 'go' });
        expect(result.terminal).toBe('end_turn');
        const resume = provider.inputs[1] as unknown as { results: { toolUseId: string; content: string; isError: boolean }[] };
        const byId = Object.fromEntries(resume.results.map((r) => [r.toolUseId, r]));
        expect(resume.results.map((r) => r.toolUseId)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
        expect(byId['a']).toMatchObject({ isError: true, content: expect.stringContaining('boom') });
        expect(byId['b']).toMatchObject({ isError: true, content: expect.stringContaining('async boom') });
        expect(byId['c']).toMatchObject({ isError: true, content: expect.stringContaining('timed out after 50 ms') });
        expect(byId['d']).toMatchObject({ isError: true, content: expect.stringContaining('malformed') });
        expect(byId['e']).toMatchObject({ isError: true, content: expect.stringContaining('a must be an integer') });
        expect(byId['f']).toMatchObject({ isError: true, content: expect.stringContaining("unknown tool 'nope'") });
        expect(byId['g']).toEqual({ toolUseId: 'g', content: '{"sum":3}', isError: false, json: true });
        expect(HangingToolHandler.aborted).toBe(1);
      });
    });

    describe('when a requires_action names tool uses from an earlier batch, and stale idles re-ask (streaming)', () => {
      it('should answer exactly the named ids: recover from history, run each once, replay re-asks from the ledger', async () => {
        const provider = new ScriptedProvider({
          mode: 'streaming',
          turns: [
            { events: [ev.toolUse('u0', 'echo', { text: 'z' }), ev.idle('i0', 'requires_action', ['u0'])] },
            // A stale idle re-names u0 while u1 and u2 arrive unanswered: only u0 may be answered.
            { events: [ev.toolUse('u1', 'echo', { text: 'a' }), ev.toolUse('u2', 'echo', { text: 'b' }), ev.idle('i1', 'requires_action', ['u0'])] },
            { events: [ev.idle('i2', 'requires_action', ['u1', 'u2'])] },
            { events: [ev.idle('i3', 'requires_action', ['u2'])] },
            { events: [ev.text('t', 'ok'), ev.idle('i4', 'end_turn')] },
          ],
        });
        rx = await create(provider);
        const result = await rx.run({ prompt: 'go' });
        expect(result.terminal).toBe('end_turn');
        expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['z', 'a', 'b']);
        const resumes = (provider.inputs.filter((i) => i.kind === 'resume') as unknown as { results: { toolUseId: string; content: string }[] }[]).map((r) =>
          r.results.map((x) => `${x.toolUseId}=${x.content}`),
        );
        expect(resumes).toEqual([['u0=Z'], ['u0=Z'], ['u1=A', 'u2=B'], ['u2=B']]);
      });
    });

    describe('when nothing is recoverable for a requires_action', () => {
      it('should fail loudly with unresolved_requires_action and post nothing empty', async () => {
        const provider = new ScriptedProvider({ mode: 'streaming', turns: [{ events: [ev.idle('i1', 'requires_action', ['ghost'])] }] });
        const recorder = new RecordingConsumer();
        rx = await create(provider, { consumers: [recorder] });
        await expect(rx.run({ prompt: 'go' })).rejects.toMatchObject({ code: 'unresolved_requires_action' });
        expect(provider.inputs.filter((i) => i.kind === 'resume')).toHaveLength(0);
        await rx.stop();
        expect(recorder.stops).toEqual(['error']);
        expect(recorder.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'unresolved_requires_action' });
      });
    });

    describe('when the run times out during a hanging poll', () => {
      it('should abort the poll, reject with timeout and stop every consumer once', async () => {
        const provider = new ScriptedProvider({ turns: [{ events: [ev.text('t', 'thinking…')], hang: true }] });
        const a = new RecordingConsumer('a');
        const b = new RecordingConsumer('b');
        rx = await create(provider, { consumers: [a, b] });
        const err = await rx.run({ prompt: 'go', timeoutMs: 40 }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(AgentRxError);
        expect((err as AgentRxError).code).toBe('timeout');
        await rx.stop();
        expect(provider.aborted).toBe(1);
        expect(a.stops).toEqual(['timeout']);
        expect(b.stops).toEqual(['timeout']);
      });
    });

    describe('when cancelled through the AbortSignal while streaming', () => {
      it('should detach the stream, interrupt the host, reject with cancelled and stop consumers once', async () => {
        const provider = new ScriptedProvider({ mode: 'streaming', turns: [{ events: [ev.text('t', 'working')] }] });
        const recorder = new RecordingConsumer();
        rx = await create(provider, { consumers: [recorder] });
        const ctrl = new AbortController();
        const s = rx.start({ prompt: 'go', signal: ctrl.signal });
        await new Promise<void>((resolve) => s.events$.subscribe((e) => e.source === 'provider' && e.raw['id'] === 't' && resolve()));
        ctrl.abort();
        await expect(s.result).rejects.toMatchObject({ code: 'cancelled' });
        await rx.stop();
        expect(provider.aborted).toBe(1);
        expect(provider.interrupts).toBe(1);
        expect(recorder.stops).toEqual(['cancelled']);
      });
    });

    describe('when cancelled while a tool runs', () => {
      it('should fire the tool signal and reject with cancelled', async () => {
        const provider = new ScriptedProvider({ turns: [{ events: [ev.toolUse('h', 'hangs'), ev.idle('i', 'requires_action')] }] });
        rx = await create(provider, { config: { limits: { toolTimeoutMs: 60_000 } } });
        const s = rx.start({ prompt: 'go' });
        await new Promise<void>((resolve) => s.events$.subscribe((e) => e.raw['type'] === 'agentrx.tool_started' && resolve()));
        s.cancel();
        await expect(s.result).rejects.toMatchObject({ code: 'cancelled' });
        expect(HangingToolHandler.aborted).toBe(1);
      });
    });

    describe('when maxTurns is reached and a turnGuard is set', () => {
      const loop = (): ScriptedTurn[] =>
        Array.from({ length: 5 }, (_, i) => ({ events: [ev.toolUse(`u${i}`, 'echo', { text: 'x' }), ev.usage(100, 1), ev.idle(`i${i}`, 'requires_action')] }));
      it('should fail with max_turns_exceeded', async () => {
        rx = await create(new ScriptedProvider({ turns: loop() }));
        await expect(rx.run({ maxTurns: 2 })).rejects.toMatchObject({ code: 'max_turns_exceeded', details: { turns: 2 } });
      });
      it('should let the guard win over maxTurns', async () => {
        rx = await create(new ScriptedProvider({ turns: loop() }));
        await expect(rx.run({ maxTurns: 2, turnGuard: (usage) => usage.inputTokens >= 200 && 'token budget' })).rejects.toMatchObject({
          code: 'halted',
          message: expect.stringContaining('token budget'),
        });
      });
    });

    describe('when many sessions share one caller signal', () => {
      it('should release the caller signal when each session closes', async () => {
        const turns: ScriptedTurn[] = Array.from({ length: 20 }, (_, i) => ({ events: [ev.idle(`i${i}`, 'end_turn')] }));
        rx = await create(new ScriptedProvider({ turns }));
        const shared = new AbortController();
        for (let i = 0; i < 20; i++) await rx.run({ prompt: 'go', signal: shared.signal });
        expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
      });
    });

    describe('when a throwing and a hanging consumer sit next to a recorder', () => {
      it('should deliver every event to the recorder in order and report both faults', async () => {
        const provider = new ScriptedProvider({ turns: twoTurnScript() });
        const recorder = new RecordingConsumer();
        const throwing = new ThrowingConsumer();
        const hanging = new HangingConsumer();
        rx = await create(provider, { consumers: [throwing, hanging, recorder] });
        const errors: ConsumerError[] = [];
        rx.consumerErrors$.subscribe((e) => errors.push(e));
        const result = await rx.run({ prompt: 'go' });
        await rx.stop();
        expect(result.terminal).toBe('end_turn');
        expect(recorder.contexts.map((c) => c.seq)).toEqual(recorder.events.map((_, i) => i + 1));
        expect(recorder.events[0]!.type).toBe('RUN_STARTED');
        expect(recorder.events.at(-1)!.type).toBe('RUN_FINISHED');
        expect(errors.some((e) => e.consumerId === 'throwing' && e.phase === 'event' && e.message.includes('consumer exploded'))).toBe(true);
        expect(errors.some((e) => e.consumerId === 'hanging' && e.message.includes('did not settle'))).toBe(true);
        expect(throwing.stops).toBe(1);
        expect(hanging.stops).toBe(1);
      });
    });
  });

  describe.each<ProviderMode>(['request_response', 'streaming'])('.close in %s mode', (mode) => {
    describe('when called while a slow tool runs', () => {
      it('should post the tool result, end the request with end_turn, resolve result, then close', async () => {
        GateToolHandler.reset();
        const provider = new ScriptedProvider({
          mode,
          turns: [
            { events: [ev.toolUse('u1', 'slow', { text: 'x' }), ev.idle('i1', 'requires_action', ['u1'])] },
            { events: [ev.text('t2', 'done'), ev.idle('i2', 'end_turn')] },
          ],
        });
        const rec = new RecordingConsumer();
        rx = await create(provider, { consumers: [rec] });
        const s = rx.start({ prompt: 'go' });
        const order: string[] = [];
        const results: string[] = [];
        s.results$.subscribe({ next: (r) => results.push(r.terminal), complete: () => results.push('complete'), error: () => results.push('error') });
        void s.result.then((r) => order.push(`result ${r.terminal}`));
        void s.closed.then(() => order.push('closed'));
        await GateToolHandler.started;
        s.close();
        expect(() => s.message('too late')).toThrow(expect.objectContaining({ code: 'session_closed' }));
        GateToolHandler.open();
        await s.closed;
        expect(provider.inputs.find((i) => i.kind === 'resume')).toMatchObject({ results: [{ toolUseId: 'u1', content: 'slow:x', isError: false }] });
        expect(results).toEqual(['end_turn', 'complete']);
        expect(order).toEqual(['result end_turn', 'closed']);
        expect(rec.stops).toEqual(['completed']);
        expect(provider.inputs).toHaveLength(2);
      });
    });
  });

  describe('.close', () => {
    describe('when messages were queued behind the running request', () => {
      it('should answer each queued message in turn before closing', async () => {
        const provider = new ScriptedProvider({
          turns: [
            { events: [ev.text('t1', 'first'), ev.idle('i1', 'end_turn')] },
            { events: [ev.text('t2', 'second'), ev.idle('i2', 'end_turn')] },
            { events: [ev.text('t3', 'third'), ev.idle('i3', 'end_turn')] },
          ],
        });
        rx = await create(provider);
        const s = rx.start({ prompt: 'go' });
        const texts: string[] = [];
        s.results$.subscribe({ next: (r) => texts.push(r.text), complete: () => texts.push('complete') });
        s.message('and then?');
        s.message('and last?');
        s.close();
        await s.closed;
        expect(texts).toEqual(['first', 'second', 'third', 'complete']);
        expect(provider.inputs.filter((i) => i.kind === 'user').map((i) => i.text)).toEqual(['and then?', 'and last?']);
      });
    });
  });

  describe('.release and .leave (LiveSession)', () => {
    describe('when the caller releases a live session with a message queued', () => {
      it('should answer it as close() does and resolve once the session closed', async () => {
        const provider = new ScriptedProvider({
          turns: [{ events: [ev.text('t1', 'first'), ev.idle('i1', 'end_turn')] }, { events: [ev.text('t2', 'second'), ev.idle('i2', 'end_turn')] }],
        });
        rx = await create(provider);
        const s = rx.start({ prompt: 'go' });
        const texts: string[] = [];
        s.results$.subscribe({ next: (r) => texts.push(r.text), complete: () => texts.push('complete') });
        let closed = false;
        void s.closed.then(() => (closed = true));
        s.message('and then?');
        await s.release();
        expect(closed).toBe(true);
        expect(texts).toEqual(['first', 'second', 'complete']);
      });
    });

    describe('when the process leaves a running live session', () => {
      it('should cancel it as a shutdown (results$ completes, result rejects cancelled) and resolve once it closed', async () => {
        GateToolHandler.reset();
        rx = await create(new ScriptedProvider({ turns: [{ events: [ev.toolUse('u1', 'slow', { text: 'x' }), ev.idle('i1', 'requires_action', ['u1'])] }] }));
        const s = rx.start({ prompt: 'go' });
        const ended = new Promise<string>((resolve) => s.results$.subscribe({ complete: () => resolve('complete'), error: () => resolve('error') }));
        await GateToolHandler.started;
        let closed = false;
        void s.closed.then(() => (closed = true));
        await s.leave();
        expect(closed).toBe(true);
        await expect(ended).resolves.toBe('complete');
        await expect(s.result).rejects.toMatchObject({ code: 'cancelled' });
      });
    });
  });

  describe('AgentRx.stop', () => {
    describe('when a live session is still running', () => {
      it('should cancel it, complete its results$ (no error to crash a subscriber) and reject its result with cancelled', async () => {
        GateToolHandler.reset();
        rx = await create(new ScriptedProvider({ turns: [{ events: [ev.toolUse('u1', 'slow', { text: 'x' }), ev.idle('i1', 'requires_action', ['u1'])] }] }));
        const s = rx.start({ prompt: 'go' });
        const ended = new Promise<string>((resolve) => s.results$.subscribe({ complete: () => resolve('complete'), error: () => resolve('error') }));
        await GateToolHandler.started;
        await rx.stop();
        rx = undefined;
        await expect(ended).resolves.toBe('complete');
        await expect(s.result).rejects.toMatchObject({ code: 'cancelled' });
      });
    });
  });

  describe('.results$', () => {
    describe('when a live session is cancelled', () => {
      it('should error with the typed cancellation after the results already delivered', async () => {
        rx = await create(new ScriptedProvider({ turns: [{ events: [ev.idle('i1', 'end_turn')] }] }));
        const s = rx.start({ prompt: 'go' });
        const seen: string[] = [];
        const errored = new Promise<unknown>((resolve) =>
          s.results$.subscribe({ next: (r) => seen.push(r.terminal), error: resolve, complete: () => resolve('completed') }),
        );
        await s.result;
        s.cancel();
        await expect(errored).resolves.toMatchObject({ code: 'cancelled' });
        expect(seen).toEqual(['end_turn']);
      });
    });
  });

  describe('.start with sessionId (resume)', () => {
    describe('when history holds an unanswered tool use whose result the ledger recorded', () => {
      it('should re-post the recorded result without re-running the tool, then send the prompt', async () => {
        const history = [ev.toolUse('u9', 'echo', { text: 'old' }), ev.idle('i0', 'requires_action', ['u9'])];
        const provider = new ScriptedProvider({
          mode: 'streaming',
          history,
          turns: [{ events: [ev.idle('i1', 'end_turn')] }, { events: [ev.text('t', 'answer'), ev.idle('i2', 'end_turn')] }],
        });
        rx = await create(provider);
        const store = rx.container.get<import('../../../src/core/store/session-store.js').SessionStore>(
          (await import('../../../src/core/store/session-store.js')).SessionStore,
        );
        await store.save({
          version: 2,
          sessionId: 'sess-1',
          provider: 'scripted',
          threadId: 'sess-1',
          status: 'idle',
          createdAt: 0,
          updatedAt: 0,
          ledger: [{ toolUseId: 'u9', name: 'echo', state: 'executed', result: { toolUseId: 'u9', content: 'OLD', isError: false } }],
        });
        const result = await rx.run({ sessionId: 'sess-1', prompt: 'next question' });
        expect(result.text).toBe('answer');
        expect(EchoToolHandler.calls).toHaveLength(0);
        expect(provider.inputs[0]).toMatchObject({ kind: 'resume', results: [{ toolUseId: 'u9', content: 'OLD', isError: false }] });
        expect(provider.inputs[1]).toEqual({ kind: 'user', text: 'next question' });
        expect((await store.load('sess-1'))!.ledger[0]!.state).toBe('posted');
      });
    });
  });
});

describe('AgentRx.teardown', () => {
  class Provisioning extends ScriptedProvider {
    readonly tornDown: unknown[] = [];
    constructor(private readonly failWith?: Error) {
      super({ turns: [{ events: [ev.text('a', 'hi'), ev.idle('i', 'end_turn')] }] });
    }
    async provision(): Promise<unknown> {
      return { created: 'handle-1' };
    }
    async teardown(handle: unknown): Promise<void> {
      if (this.failWith) throw this.failWith;
      this.tornDown.push(handle);
    }
  }

  it('should tear down each provisioned handle once', async () => {
    const provider = new Provisioning();
    const rx = await create(provider);
    await rx.run({ prompt: 'go' });
    await rx.teardown();
    await rx.teardown();
    await rx.stop();
    expect(provider.tornDown).toEqual([{ created: 'handle-1' }]);
  });

  it('should report a failing teardown as one provider_error naming the provider', async () => {
    const rx = await create(new Provisioning(new Error('archive refused')));
    await rx.run({ prompt: 'go' });
    await expect(rx.teardown()).rejects.toMatchObject({ code: 'provider_error', message: expect.stringContaining('scripted: archive refused') });
    await rx.stop();
  });
});
