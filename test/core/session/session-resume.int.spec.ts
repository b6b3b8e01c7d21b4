import { AgentRx } from '../../../src/agentrx.js';
import { ContainerModule } from '../../../src/core/util/inversify.js';
import type { SessionEvent } from '../../../src/core/events/session-event.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import { SessionStore } from '../../../src/core/store/session-store.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';
import { ScriptedProvider, ev } from '../../../src/testing/scripted-provider.js';
import { EchoToolHandler, resetFakeTools } from '../../fakes/fake-tools.js';
import { rejectedWith } from '../../support/agentrx-errors.js';

/** One AgentRx "process" on the Local provider, sharing `store` with the others. */
function instance(emu: OpenAiEmulator, store: SessionStore): Promise<AgentRx> {
  return AgentRx.create({
    modules: [new ContainerModule((options) => void options.bind(SessionStore).toConstantValue(store))],
    tools: [EchoToolHandler],
    config: { provider: 'local', logLevel: 'silent', consumers: { terminal: false }, providers: { local: { baseUrl: emu.baseUrl, model: 'scripted' } } },
  });
}

type Message = { role: string; content?: string | null; tool_calls?: { id: string }[]; tool_call_id?: string };
const messagesOf = (emu: OpenAiEmulator, completion: number): Message[] =>
  (emu.requests.find((r) => r.completion === completion)!.body as { messages: Message[] }).messages;

describe('Session log (memory store shared by two instances)', () => {
  let emu: OpenAiEmulator | undefined;
  const instances: AgentRx[] = [];
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    for (const rx of instances.splice(0)) await rx.stop();
    await emu?.close();
  });

  describe('when a Local conversation with a tool call is resumed by id in another instance', () => {
    it('should send the model every earlier message and tool result, and go on numbering the log without a gap', async () => {
      emu = await startOpenAiEmulator({
        script: [
          { toolCalls: [{ id: 'call_1', name: 'echo', arguments: { text: 'ada' } }] },
          { text: 'Nice to meet you, Ada.' },
          { text: 'Your name is Ada.' },
        ],
      });
      const store = new MemorySessionStore();
      const first = await instance(emu, store);
      instances.push(first);
      const r1 = await first.run({ prompt: 'My name is Ada.' });
      expect(r1.text).toBe('Nice to meet you, Ada.');
      await first.stop();

      const second = await instance(emu, store);
      instances.push(second);
      const r2 = await second.run({ sessionId: r1.sessionId, prompt: 'What is my name?' });
      expect(r2.text).toBe('Your name is Ada.');

      const resumed = messagesOf(emu, 2);
      expect(resumed.map((m) => [m.role, m.content ?? null, m.tool_call_id ?? null])).toEqual([
        ['user', 'My name is Ada.', null],
        ['assistant', null, null],
        ['tool', 'ADA', 'call_1'],
        ['assistant', 'Nice to meet you, Ada.', null],
        ['user', 'What is my name?', null],
      ]);
      expect(resumed[1]!.tool_calls!.map((c) => c.id)).toEqual(['call_1']);
      expect(EchoToolHandler.calls).toHaveLength(1);

      const log = await store.read(r1.sessionId!, 0, 10_000);
      expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
      const runs = log.flatMap((e: SessionEvent) => (e.source === 'agentrx' && e.raw.type === 'agentrx.run_started' ? [e.raw.resumed] : []));
      expect(runs).toEqual([false, true]);
      expect(await store.load(r1.sessionId!)).toMatchObject({ status: 'completed', provider: 'local', threadId: r1.sessionId });
    });
  });

  describe('when a streaming session is resumed by id in another instance', () => {
    it('should place the host history after the log (no event logged twice) and go on numbering', async () => {
      const host = new ScriptedProvider({
        mode: 'streaming',
        turns: [
          { events: [ev.text('t1', 'Echoing. '), ev.toolUse('u1', 'echo', { text: 'x' }), ev.idle('i1', 'requires_action', ['u1'])] },
          { events: [ev.text('t2', 'Done.'), ev.idle('i2', 'end_turn')] },
          { events: [ev.text('t3', 'Again.'), ev.idle('i3', 'end_turn')] },
        ],
      });
      const store = new MemorySessionStore();
      const make = (): Promise<AgentRx> =>
        AgentRx.create({
          defaults: false,
          providers: [host],
          tools: [EchoToolHandler],
          modules: [new ContainerModule((options) => void options.bind(SessionStore).toConstantValue(store))],
          config: { provider: 'scripted', logLevel: 'silent', consumers: { terminal: false } },
        });
      const first = await make();
      instances.push(first);
      const r1 = await first.run({ prompt: 'go' });
      await first.stop();
      const second = await make();
      instances.push(second);
      const r2 = await second.run({ sessionId: r1.sessionId, prompt: 'again' });
      expect(r2.text).toBe('Again.');
      const log = await store.read(r1.sessionId!, 0, 10_000);
      const ids = log.flatMap((e) => (e.source === 'provider' && e.id !== undefined ? [e.id] : []));
      expect(ids).toEqual([...new Set(ids)]);
      expect(ids).toEqual(expect.arrayContaining(['t1', 'u1', 'i1', 't2', 'i2', 't3', 'i3']));
      expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
      expect(EchoToolHandler.calls).toHaveLength(1);
    });
  });

  describe('when a Local session is resumed but nothing of it was stored (taken over before its first turn ended)', () => {
    it('should start from freshPrompt', async () => {
      emu = await startOpenAiEmulator({ script: [{ text: 'Hello Ada.' }] });
      const rx = await instance(emu, new MemorySessionStore());
      instances.push(rx);
      await rx.run({ sessionId: 'never-stored', freshPrompt: 'My name is Ada.' });
      expect(messagesOf(emu, 0).map((m) => [m.role, m.content])).toEqual([['user', 'My name is Ada.']]);
    });
  });

  describe('when a Local session id the store does not have is resumed (a typo)', () => {
    it.each([
      ['with a prompt', { prompt: 'What is my name?' }],
      ['without one', {}],
    ])('should reject %s with invalid_options naming the id, calling no model', async (_what, extra) => {
      emu = await startOpenAiEmulator({ script: [{ text: 'never' }] });
      const rx = await instance(emu, new MemorySessionStore());
      instances.push(rx);
      const e = await rejectedWith('invalid_options', rx.run({ sessionId: 'local-typo', ...extra }));
      expect(e.message).toMatch(/^cannot resume session 'local-typo': the session store has no session of that id/);
      expect(e.message).toContain('agentrx sessions ls');
      expect(emu.requests.filter((r) => r.completion !== undefined)).toHaveLength(0);
    });
  });

  describe('when the stored record lost a ledger entry the log shows running', () => {
    it('should refuse to resume with store_error naming the tool use, running nothing', async () => {
      emu = await startOpenAiEmulator({
        script: [{ toolCalls: [{ id: 'call_1', name: 'echo', arguments: { text: 'ada' } }] }, { text: 'Done.' }, { text: 'never' }],
      });
      const store = new MemorySessionStore();
      const first = await instance(emu, store);
      instances.push(first);
      const r1 = await first.run({ prompt: 'go' });
      await first.stop();
      const record = (await store.load(r1.sessionId!))!;
      await store.save({ ...record, ledger: [] });

      const second = await instance(emu, store);
      instances.push(second);
      await expect(second.run({ sessionId: r1.sessionId, prompt: 'again' })).rejects.toMatchObject({
        code: 'store_error',
        message: expect.stringContaining('call_1'),
      });
      expect(EchoToolHandler.calls).toHaveLength(1);
      expect(emu.requests.filter((r) => r.completion !== undefined)).toHaveLength(2);
      // Left as it was: no status written by the refused resume, and the session can be taken again.
      expect(await store.load(r1.sessionId!)).toMatchObject({ status: 'completed', ledger: [] });
      await (await store.acquire(r1.sessionId!)).release();
    });
  });

  describe('when a session is still open in one instance and another resumes it', () => {
    it('should refuse the second with store_error instead of running the session twice', async () => {
      emu = await startOpenAiEmulator({ script: [{ text: 'one' }, { text: 'two' }] });
      const store = new MemorySessionStore();
      const first = await instance(emu, store);
      instances.push(first);
      const live = first.start({ prompt: 'hello' });
      const r1 = await live.result;
      await expect(first.run({ sessionId: r1.sessionId, prompt: 'again' })).rejects.toMatchObject({
        code: 'store_error',
        message: expect.stringContaining(r1.sessionId!),
      });
      live.close();
      await live.closed;
    });
  });

  describe('when a reader attaches to a stored session', () => {
    it('should replay the envelopes after afterSeq and their AG-UI translation tagged with seq', async () => {
      emu = await startOpenAiEmulator({ script: [{ text: 'Hello there' }] });
      const store = new MemorySessionStore();
      const rx = await instance(emu, store);
      instances.push(rx);
      const r = await rx.run({ prompt: 'hi' });
      const all = await store.read(r.sessionId!, 0);
      const seen: number[] = [];
      const agui: { seq: number; type: string }[] = [];
      const a = rx.attach(r.sessionId!, { afterSeq: 2 });
      const s1 = a.events$.subscribe((e) => seen.push(e.seq));
      const s2 = a.agui$.subscribe(({ seq, event }) => agui.push({ seq, type: event.type }));
      s1.unsubscribe();
      s2.unsubscribe();
      expect(seen).toEqual(all.slice(2).map((e) => e.seq));
      expect(agui.every((x) => x.seq > 2)).toBe(true);
      expect(agui.map((x) => x.type)).not.toContain('RUN_STARTED');
      expect(agui.at(-1)!.type).toBe('RUN_FINISHED');
      expect(() => rx.attach(r.sessionId!, { afterSeq: -1 })).toThrow(expect.objectContaining({ code: 'invalid_options' }));
    });
  });
});
