import { throwError } from 'rxjs';
import { AgentRx } from '../../../src/agentrx.js';
import { AgentRxError } from '../../../src/core/errors.js';
import type { SessionEvent } from '../../../src/core/events/session-event.js';
import type { SessionResult } from '../../../src/core/model.js';
import type { SessionStore as SessionStoreContract } from '../../../src/core/store/session-store.js';
import { ScriptedProvider, ev, type ScriptedTurn } from '../../../src/testing/scripted-provider.js';
import { RecordingConsumer } from '../../../src/testing/recording-consumer.js';
import { EchoToolHandler, resetFakeTools } from '../../fakes/fake-tools.js';
import { tempDir } from '../../support/temp-dir.js';

async function create(provider: ScriptedProvider, config: Record<string, unknown> = {}, consumers: RecordingConsumer[] = []): Promise<AgentRx> {
  return AgentRx.create({
    defaults: false,
    providers: [provider],
    tools: [EchoToolHandler],
    consumers,
    config: { provider: provider.id, limits: { reconnectBaseMs: 1, reconnectAttempts: 3 }, consumers: { terminal: false }, ...config },
  });
}

/** Three turns: tool → tool → answer. */
const threeTurns = (drop?: { turn: number; after: number; kind: 'error' | 'close' }): ScriptedTurn[] => {
  const turns: ScriptedTurn[] = [
    { events: [ev.text('a1', 'one '), ev.toolUse('u1', 'echo', { text: 'x' }), ev.usage(1, 1), ev.idle('i1', 'requires_action', ['u1'])] },
    { events: [ev.text('a2', 'two '), ev.toolUse('u2', 'echo', { text: 'y' }), ev.usage(1, 1), ev.idle('i2', 'requires_action', ['u2'])] },
    { events: [ev.text('a3', 'three'), ev.usage(1, 1), ev.idle('i3', 'end_turn')] },
  ];
  if (drop) turns[drop.turn] = { ...turns[drop.turn]!, dropAfter: drop.after, dropKind: drop.kind };
  return turns;
};

/** Starts a live session, records its envelopes, and closes it after the first request. */
async function firstRequest(rx: AgentRx): Promise<{ envs: SessionEvent[]; result: SessionResult }> {
  const s = rx.start({ prompt: 'go' });
  const envs: SessionEvent[] = [];
  s.events$.subscribe((e) => envs.push(e));
  const result = await s.result;
  s.close();
  await s.closed;
  return { envs, result };
}

function comparable(r: SessionResult): unknown {
  return { terminal: r.terminal, text: r.text, turns: r.turns, usage: r.usage, stopReason: r.stopReason };
}

describe('Session (streaming)', () => {
  let rx: AgentRx | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await rx?.stop();
    rx = undefined;
  });

  describe('.run', () => {
    describe('when the stream drops after every event index of a three-turn session', () => {
      const cases: { turn: number; after: number; kind: 'error' | 'close' }[] = [];
      for (const kind of ['error', 'close'] as const)
        for (let turn = 0; turn < 3; turn++) for (let after = 0; after <= (turn < 2 ? 4 : 2); after++) cases.push({ turn, after, kind });

      it.each(cases)(
        'should match the fault-free result with no duplicate, no gap and one execution per tool (turn $turn, after $after, $kind)',
        async (drop) => {
          const clean = new ScriptedProvider({ mode: 'streaming', turns: threeTurns() });
          rx = await create(clean);
          const expected = await rx.run({ prompt: 'go' });
          await rx.stop();
          resetFakeTools();

          const provider = new ScriptedProvider({ mode: 'streaming', turns: threeTurns(drop), duplicateOnReattach: 2 });
          const rec = new RecordingConsumer();
          rx = await create(provider, {}, [rec]);
          const { envs, result } = await firstRequest(rx);

          expect(comparable(result)).toEqual(comparable(expected));
          expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['x', 'y']);
          expect(envs.map((e) => e.seq)).toEqual(envs.map((_, i) => i + 1));
          const ids = envs.flatMap((e) => (e.source === 'provider' && e.id !== undefined ? [e.id] : []));
          expect(new Set(ids).size).toBe(ids.length);
          expect(provider.attachments).toBe(2);
          expect(rec.events.filter((e) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR')).toHaveLength(1);
          expect(rec.text).toBe('one two three');
          expect(provider.inputs.filter((i) => i.kind === 'kickoff')).toHaveLength(1);
        },
      );
    });

    describe('when the stream drops after more events than the dedupe window holds', () => {
      it('should feed only what came after the last ingested event, with no duplicate and flat memory', async () => {
        const long = Array.from({ length: 250 }, (_, i) => ev.text(`t${i}`, 'x'));
        const turns: ScriptedTurn[] = [
          { events: [...long, ev.toolUse('u1', 'echo', { text: 'x' }), ev.idle('i1', 'requires_action', ['u1'])] },
          { events: [ev.text('a2', 'a'), ev.text('b2', 'b'), ev.text('c2', 'c'), ev.idle('i2', 'end_turn')], dropAfter: 1 },
        ];
        const provider = new ScriptedProvider({ mode: 'streaming', turns });
        rx = await create(provider, { limits: { reconnectBaseMs: 1, reconnectAttempts: 3, dedupeWindow: 100 } });
        const { envs, result } = await firstRequest(rx);

        const ids = envs.flatMap((e) => (e.source === 'provider' && e.id !== undefined ? [e.id] : []));
        expect(new Set(ids).size).toBe(ids.length);
        const scripted = turns.flatMap((t) => t.events.map((e) => e['id']));
        expect(scripted.filter((id) => !ids.includes(id as string))).toEqual([]);
        expect(result.text).toBe('abc');
        expect(provider.attachments).toBe(2);
        expect(EchoToolHandler.calls).toHaveLength(1);
      });
    });

    describe('when reconnect fails with a non-retryable error (the history cannot be aligned)', () => {
      it('should end the run with that error after one attempt instead of retrying', async () => {
        class Unalignable extends ScriptedProvider {
          reconnects = 0;
          override async reconnect(): Promise<never> {
            this.reconnects++;
            throw new AgentRxError('provider_error', "cannot find the session's place in the host's history; raise limits.dedupeWindow", { retryable: false });
          }
        }
        const provider = new Unalignable({ mode: 'streaming', turns: threeTurns({ turn: 0, after: 1, kind: 'error' }) });
        rx = await create(provider);
        await expect(rx.run({ prompt: 'go' })).rejects.toMatchObject({ code: 'provider_error', message: expect.stringContaining('limits.dedupeWindow') });
        expect(provider.reconnects).toBe(1);
      });
    });

    describe('when every reconnect attempt fails', () => {
      it('should give up after the configured attempts with a typed stream_error', async () => {
        const provider = new ScriptedProvider({ mode: 'streaming', turns: [{ events: [ev.text('a', 'x')], dropAfter: 1 }] });
        const originalStream = provider.stream.bind(provider);
        let attaches = 0;
        provider.stream = (conn) => (++attaches === 1 ? originalStream(conn) : throwError(() => new Error('connection refused')));
        rx = await create(provider);
        await expect(rx.run({ prompt: 'go' })).rejects.toMatchObject({
          code: 'stream_error',
          message: expect.stringMatching(/3 reconnect attempts failed: .*connection refused/),
        });
        expect(attaches).toBe(4);
      });
    });
  });

  describe('.start (live)', () => {
    describe('when a follow-up message is sent while a turn runs', () => {
      it('should wait for the terminal, then run it as a new request with fresh counters', async () => {
        const provider = new ScriptedProvider({
          mode: 'streaming',
          turns: [
            { events: [ev.toolUse('u1', 'echo', { text: 'x' }), ev.idle('i1', 'requires_action', ['u1'])] },
            { events: [ev.text('a', 'first'), ev.idle('i2', 'end_turn')] },
            { events: [ev.text('b', 'second'), ev.idle('i3', 'end_turn')] },
          ],
        });
        rx = await create(provider, { limits: { maxTurns: 2, reconnectBaseMs: 1 } });
        const s = rx.start({ prompt: 'go' });
        const results: SessionResult[] = [];
        s.results$.subscribe((r) => results.push(r));
        s.message('and then?');
        const second = new Promise<void>((resolve) => s.results$.subscribe(() => results.length === 2 && resolve()));
        await second;
        s.close();
        await s.closed;
        expect(results.map((r) => [r.text, r.turns])).toEqual([
          ['first', 2],
          ['second', 1],
        ]);
        expect(provider.inputs.map((i) => i.kind)).toEqual(['kickoff', 'resume', 'user']);
        expect(() => s.message('late')).toThrow(expect.objectContaining({ code: 'session_closed' }));
      });
    });
  });

  describe('when the host sends more events after a turn ended (usage, status) and a message follows', () => {
    it('should send the message at once: only reconnect decides that the host is mid-turn', async () => {
      const provider = new ScriptedProvider({
        mode: 'streaming',
        turns: [{ events: [ev.text('a', 'first'), ev.idle('i1', 'end_turn')] }, { events: [ev.text('b', 'second'), ev.idle('i2', 'end_turn')] }],
      });
      rx = await create(provider);
      const s = rx.start({ prompt: 'go' });
      const results: SessionResult[] = [];
      const second = new Promise<void>((resolve) =>
        s.results$.subscribe((r) => {
          results.push(r);
          if (results.length === 1) {
            provider.emitLive(ev.usage(3, 4, 'late-usage'));
            s.message('and then?');
          }
          if (results.length === 2) resolve();
        }),
      );
      await second;
      s.close();
      await s.closed;
      expect(results.map((r) => r.text)).toEqual(['first', 'second']);
    });
  });

  describe('.message', () => {
    it('should reject an empty message with invalid_options and a message to a closed session with session_closed', async () => {
      const provider = new ScriptedProvider({ mode: 'streaming', turns: [{ events: [ev.idle('i', 'end_turn')] }] });
      rx = await create(provider);
      const s = rx.start({ prompt: 'go' });
      expect(() => s.message('')).toThrow(expect.objectContaining({ code: 'invalid_options' }));
      await s.result;
      s.close();
      await s.closed;
      expect(() => s.message('late')).toThrow(expect.objectContaining({ code: 'session_closed' }));
      await expect(s.sendEvent({ type: 'user.interrupt' })).rejects.toMatchObject({ code: 'session_closed' });
      expect(provider.inputs.map((i) => i.kind)).toEqual(['kickoff']);
    });
  });

  describe('.sendEvent', () => {
    it('should post a raw event now on a streaming provider', async () => {
      const provider = new ScriptedProvider({ mode: 'streaming', turns: [{ events: [ev.text('a', 'waiting')] }] });
      rx = await create(provider);
      const s = rx.start({ prompt: 'go' });
      await new Promise<void>((resolve) => s.events$.subscribe((e) => e.source === 'provider' && e.raw['id'] === 'a' && resolve()));
      await s.sendEvent({ type: 'user.tool_confirmation', tool_use_id: 'x', result: 'allow' });
      expect(provider.inputs.at(-1)).toEqual({ kind: 'raw', event: { type: 'user.tool_confirmation', tool_use_id: 'x', result: 'allow' } });
      s.cancel();
    });

    it('should reject with unsupported on a request/response provider', async () => {
      const provider = new ScriptedProvider({ turns: [{ events: [ev.idle('i', 'end_turn')] }] });
      rx = await create(provider);
      const s = rx.start({ prompt: 'go' });
      await expect(s.sendEvent({ type: 'x' })).rejects.toMatchObject({ code: 'unsupported' });
      await s.result;
      s.close();
    });
  });
});

describe('Session options', () => {
  let rx: AgentRx | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await rx?.stop();
    rx = undefined;
  });

  describe('when an outcome is asked of a provider without outcomes', () => {
    it('should throw outcome_unsupported before opening anything', async () => {
      const provider = new ScriptedProvider({ turns: [] });
      rx = await create(provider);
      expect(() => rx!.start({ outcome: { description: 'd', rubric: 'r' } })).toThrow(expect.objectContaining({ code: 'outcome_unsupported' }));
      expect(provider.inputs).toHaveLength(0);
    });
  });

  describe('when several options are invalid', () => {
    it('should list every problem in one invalid_options error', async () => {
      rx = await create(new ScriptedProvider({ turns: [] }));
      let err: AgentRxError | undefined;
      try {
        rx.start({ maxTurns: 0, timeoutMs: -5, requireTerminalTool: true, terminalTool: 'finish' });
      } catch (e) {
        if (e instanceof AgentRxError) err = e;
      }
      expect(err?.code).toBe('invalid_options');
      expect(err?.details?.['problems']).toEqual([
        expect.stringContaining('timeoutMs'),
        expect.stringContaining('maxTurns'),
        expect.stringContaining("terminalTool: 'finish' is not a registered tool; registered: echo"),
      ]);
    });
  });

  describe('when requireTerminalTool is set and the model ends without calling it', () => {
    it('should re-prompt up to maxReprompts, counting turns, then stop with no_terminal_tool', async () => {
      const provider = new ScriptedProvider({
        turns: [{ events: [ev.idle('i1', 'end_turn')] }, { events: [ev.idle('i2', 'end_turn')] }, { events: [ev.idle('i3', 'end_turn')] }],
      });
      rx = await create(provider);
      const result = await rx.run({ requireTerminalTool: true, terminalTool: 'echo', maxReprompts: 2 });
      expect(result).toMatchObject({ terminal: 'terminated', stopReason: 'no_terminal_tool', turns: 3 });
      expect(provider.inputs.slice(1)).toEqual([
        { kind: 'user', text: expect.stringContaining('`echo`') },
        { kind: 'user', text: expect.stringContaining('`echo`') },
      ]);
    });

    it('should end normally once the tool was called', async () => {
      const provider = new ScriptedProvider({
        turns: [
          { events: [ev.idle('i1', 'end_turn')] },
          { events: [ev.toolUse('u', 'echo', { text: 'done' }), ev.idle('i2', 'requires_action')] },
          { events: [ev.idle('i3', 'end_turn')] },
        ],
      });
      rx = await create(provider);
      const result = await rx.run({ requireTerminalTool: true, terminalTool: 'echo' });
      expect(result).toMatchObject({ terminal: 'end_turn', turns: 3 });
    });
  });

  describe('when the provider answered every duplicate itself (continueWithoutTools)', () => {
    it('should continue with an empty resume instead of failing', async () => {
      const provider = new ScriptedProvider({
        turns: [
          { events: [{ type: 'idle', id: 'i1', stop_reason: 'requires_action', continue: true }] },
          { events: [ev.text('t', 'ok'), ev.idle('i2', 'end_turn')] },
        ],
      });
      rx = await create(provider);
      const result = await rx.run();
      expect(result.text).toBe('ok');
      expect(provider.inputs[1]).toEqual({ kind: 'resume', toolUses: [], results: [] });
    });
  });

  describe('when a session is resumed while the host is still running a turn', () => {
    it("should send the prompt only after that turn ends, and answer with the prompt's own turn", async () => {
      const provider = new ScriptedProvider({
        mode: 'streaming',
        history: [ev.text('h1', 'still working ')],
        turns: [{ events: [ev.text('a1', 'the answer'), ev.idle('i1', 'end_turn')] }],
      });
      rx = await create(provider);
      const s = rx.start({ sessionId: 'running', prompt: 'and now?' });
      const diagnostics: string[] = [];
      s.events$.subscribe((e) => {
        if (e.raw['type'] === 'agentrx.diagnostic') diagnostics.push(String(e.raw['message']));
        // The host finishes its running turn after the resume (in the order a host would: before it takes new input).
        if (e.raw['type'] === 'agentrx.run_started') queueMicrotask(() => provider.emitLive(ev.idle('i0', 'end_turn')));
      });
      const result = await s.result;
      s.close();
      await s.closed;

      expect(result.text).toBe('the answer');
      expect(provider.inputs).toEqual([{ kind: 'user', text: 'and now?' }]);
      expect(diagnostics).toEqual([expect.stringContaining('still running a turn')]);
    });
  });

  describe('when a file store survives a restart after a tool started but recorded no result', () => {
    it('should not re-run a non-idempotent tool and answer "outcome unknown"', async () => {
      const dir = await tempDir('agentrx-restart-');
      const history = [ev.toolUse('u1', 'echo', { text: 'x' }), ev.idle('i0', 'requires_action', ['u1'])];
      const provider = new ScriptedProvider({ mode: 'streaming', history, turns: [{ events: [ev.idle('i1', 'end_turn')] }] });
      rx = await create(provider, { store: { type: 'file', dir } });
      const { SessionStore } = await import('../../../src/core/store/session-store.js');
      await rx.container.get<SessionStoreContract>(SessionStore).save({
        version: 2,
        sessionId: 'crashed',
        provider: 'scripted',
        threadId: 'crashed',
        status: 'running',
        createdAt: 0,
        updatedAt: 0,
        ledger: [{ toolUseId: 'u1', name: 'echo', state: 'executing' }],
      });
      await rx.stop();
      rx = await create(provider, { store: { type: 'file', dir } });
      const result = await rx.run({ sessionId: 'crashed' });
      expect(result.terminal).toBe('end_turn');
      expect(EchoToolHandler.calls).toHaveLength(0);
      expect(provider.inputs[0]).toMatchObject({
        kind: 'resume',
        results: [{ toolUseId: 'u1', isError: true, content: expect.stringContaining('outcome unknown') }],
      });
    });
  });
});
