import { lastValueFrom, toArray } from 'rxjs';
import { HttpClientFactoryImpl } from '../../../../src/core/http/http-client-factory.js';
import { MemoryLogger } from '../../../../src/core/logger.js';
import type { AgentSpec, RawEvent, ToolResult, ToolUse, TurnResult } from '../../../../src/core/model.js';
import { LocalProviderOptionsClass } from '../../../../src/plugins/providers/local/local.config.js';
import { LocalAgentProvider, type LocalConn, type LocalInput } from '../../../../src/plugins/providers/local/local.provider.js';
import { startOpenAiEmulator, type EmulatorTurn, type OpenAiEmulator, type OpenAiEmulatorOptions } from '../../../../src/testing/index.js';
import { hostText } from '../host-text.js';

type Json = Record<string, unknown>;

const spec: AgentSpec = {
  name: 'test-agent',
  systemPrompt: 'You are terse.',
  tools: [
    { name: 'get_weather', description: 'Weather for a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
    { name: 'get_time', description: '', inputSchema: { type: 'object', properties: {} } },
  ],
};

function makeProvider(baseUrl: string, overrides: Partial<LocalProviderOptionsClass> = {}): LocalAgentProvider {
  const options = Object.assign(new LocalProviderOptionsClass(), { baseUrl, retryBaseMs: 1 }, overrides);
  return new LocalAgentProvider(options, new HttpClientFactoryImpl(), new MemoryLogger());
}

async function poll(provider: LocalAgentProvider, conn: LocalConn, input: ReturnType<LocalAgentProvider['kickoffInput']>): Promise<TurnResult> {
  const events = await lastValueFrom(provider.pollTurn(conn, input).pipe(toArray()));
  return provider.normalize(events);
}

/**
 * Drives the provider without a Session: kickoff → poll → normalize → run tools → resume … until a
 * turn does not require action. `run` answers each tool use.
 */
async function drive(
  provider: LocalAgentProvider,
  conn: LocalConn,
  prompt: string,
  run: (use: ToolUse) => ToolResult = (u) => ({ toolUseId: u.id, content: `result of ${u.name} ${JSON.stringify(u.input)}`, isError: false }),
): Promise<TurnResult[]> {
  const turns: TurnResult[] = [];
  let input = provider.kickoffInput({ prompt });
  for (let i = 0; i < 10; i++) {
    const turn = await poll(provider, conn, input);
    turns.push(turn);
    if (turn.terminal !== 'requires_action') return turns;
    input = provider.resumeInput(turn.customToolUses, turn.customToolUses.map(run));
  }
  throw new Error('the drive did not end within 10 turns');
}

function completionBodies(emu: OpenAiEmulator): Json[] {
  return emu.requests.filter((r) => r.completion !== undefined).map((r) => r.body as Json);
}

function messagesOf(body: Json): Json[] {
  return body['messages'] as Json[];
}

function ofType(events: readonly RawEvent[], type: string): RawEvent[] {
  return events.filter((e) => e['type'] === type);
}

describe('LocalAgentProvider', () => {
  let emu: OpenAiEmulator;
  const open = (provider: LocalAgentProvider, extra: Partial<Parameters<LocalAgentProvider['open']>[0]> = {}): Promise<LocalConn> =>
    provider.open({ spec, signal: new AbortController().signal, ...extra });
  const startEmu = async (opts: OpenAiEmulatorOptions): Promise<void> => {
    emu = await startOpenAiEmulator(opts);
  };

  afterEach(async () => {
    await emu?.close();
  });

  describe('.pollTurn', () => {
    describe('when driven over three turns of two parallel tool calls each, streaming', () => {
      const script: EmulatorTurn[] = [
        {
          toolCalls: [
            { name: 'get_weather', arguments: { city: 'Oslo' } },
            { name: 'get_time', arguments: {} },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 3 },
        },
        {
          toolCalls: [
            { name: 'get_weather', arguments: { city: 'Lima' } },
            { name: 'get_weather', arguments: { city: 'Pune' } },
          ],
        },
        {
          toolCalls: [
            { name: 'get_weather', arguments: { city: 'Rome' } },
            { name: 'get_time', arguments: { tz: 'CET' } },
          ],
        },
        { text: 'It is sunny everywhere, thanks for asking.', usage: { prompt_tokens: 40, completion_tokens: 9 } },
      ];
      let turns: TurnResult[];
      let provider: LocalAgentProvider;
      let conn: LocalConn;

      beforeEach(async () => {
        await startEmu({ script });
        provider = makeProvider(emu.baseUrl, { model: 'llama-test' });
        conn = await open(provider);
        turns = await drive(provider, conn, 'weather?');
      });

      it('should map the terminals and tool uses of every turn', () => {
        expect(turns.map((t) => t.terminal)).toEqual(['requires_action', 'requires_action', 'requires_action', 'end_turn']);
        expect(turns.slice(0, 3).map((t) => t.customToolUses.map((u) => [u.name, u.input]))).toEqual([
          [
            ['get_weather', { city: 'Oslo' }],
            ['get_time', {}],
          ],
          [
            ['get_weather', { city: 'Lima' }],
            ['get_weather', { city: 'Pune' }],
          ],
          [
            ['get_weather', { city: 'Rome' }],
            ['get_time', { tz: 'CET' }],
          ],
        ]);
        expect(turns[3]).toMatchObject({ stopReason: 'stop', text: 'It is sunny everywhere, thanks for asking.', serverToolUses: [] });
        expect(turns[0]!.usage).toEqual({ inputTokens: 10, outputTokens: 3 });
        expect(turns[3]!.usage).toEqual({ inputTokens: 40, outputTokens: 9 });
      });

      it('should answer every tool_call_id exactly once in the history the emulator received', () => {
        const bodies = completionBodies(emu);
        expect(bodies).toHaveLength(4);
        expect(emu.requests.every((r) => r.status === 200)).toBe(true);
        const last = messagesOf(bodies[3]!);
        const callIds = last.filter((m) => m['role'] === 'assistant').flatMap((m) => ((m['tool_calls'] as Json[] | undefined) ?? []).map((c) => c['id']));
        const answered = last.filter((m) => m['role'] === 'tool').map((m) => m['tool_call_id']);
        expect(callIds).toHaveLength(6);
        expect(answered).toEqual(callIds);
        expect(new Set(answered).size).toBe(6);
      });

      it('should send the system prompt, the OpenAI-format tools, the model and streaming options', () => {
        const first = completionBodies(emu)[0]!;
        expect(first).toMatchObject({ model: 'llama-test', stream: true, stream_options: { include_usage: true } });
        expect(messagesOf(first)).toEqual([
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'weather?' },
        ]);
        expect(first['tools']).toEqual([
          {
            type: 'function',
            function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
          },
          { type: 'function', function: { name: 'get_time', description: '', parameters: { type: 'object', properties: {} } } },
        ]);
      });

      it('should keep the whole conversation in the transcript', () => {
        const transcript = provider.transcript(conn);
        expect(transcript.slice(0, -1)).toEqual(messagesOf(completionBodies(emu)[3]!));
        expect(transcript[transcript.length - 1]).toEqual({ role: 'assistant', content: 'It is sunny everywhere, thanks for asking.' });
        expect(provider.sessionId(conn)).toMatch(/^local-/);
        expect(provider.resumed(conn)).toBe(false);
      });

      it('should emit the chunks live, with text deltas only from chunks', () => {
        const events = turns[3]!.events;
        const chunks = ofType(events, 'local.chunk');
        expect(chunks.length).toBeGreaterThan(3);
        expect(events[events.length - 1]!['type']).toBe('local.model_response');
        const deltas = events.map((e) => hostText(provider.decode(conn, e))).filter((d) => d !== undefined);
        expect(deltas.map((d) => d.text).join('')).toBe('It is sunny everywhere, thanks for asking.');
        expect(new Set(deltas.map((d) => d.messageId))).toEqual(new Set([(chunks[0]!['chunk'] as Json)['id']]));
        expect(hostText(provider.decode(conn, events[events.length - 1]!))).toBeUndefined();
      });

      it('should take usage from the final chunk with empty choices', () => {
        const chunks = ofType(turns[3]!.events, 'local.chunk').map((e) => e['chunk'] as Json);
        expect(chunks[chunks.length - 1]).toMatchObject({ choices: [], usage: { prompt_tokens: 40, completion_tokens: 9 } });
      });
    });

    describe('when driven non-streaming (stream: false)', () => {
      it('should emit one model_response per turn whose text decode reports', async () => {
        await startEmu({ script: [{ toolCalls: [{ name: 'get_time', arguments: {} }] }, { text: 'Noon.' }] });
        const provider = makeProvider(emu.baseUrl, { stream: false });
        const conn = await open(provider);
        const turns = await drive(provider, conn, 'time?');
        expect(turns.map((t) => t.terminal)).toEqual(['requires_action', 'end_turn']);
        expect(turns.map((t) => t.events.map((e) => e['type']))).toEqual([['local.model_response'], ['local.model_response']]);
        expect(hostText(provider.decode(conn, turns[1]!.events[0]!))).toEqual({ text: 'Noon.' });
        expect(completionBodies(emu)[0]!['stream']).toBeUndefined();
      });
    });

    describe('when the first tool-call chunk carries arguments: null', () => {
      it('should still assemble the arguments', async () => {
        await startEmu({ script: [{ toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }], quirks: { nullFirstArguments: true } });
        const provider = makeProvider(emu.baseUrl);
        const turn = await poll(provider, await open(provider), provider.kickoffInput({ prompt: 'w' }));
        const raw = ofType(turn.events, 'local.chunk').map((e) => JSON.stringify(e['chunk']));
        expect(raw.some((c) => c.includes('"arguments":null'))).toBe(true);
        expect(turn.customToolUses).toEqual([{ id: 'call_e0_0', name: 'get_weather', input: { city: 'Oslo' } }]);
      });
    });

    describe('when finish_reason arrives in a chunk with an empty arguments delta', () => {
      it('should not duplicate the last call', async () => {
        await startEmu({
          script: [
            {
              toolCalls: [
                { name: 'get_weather', arguments: { city: 'Oslo' } },
                { name: 'get_time', arguments: { tz: 'UTC' } },
              ],
            },
            { text: 'ok' },
          ],
          quirks: { finishWithEmptyArgsDelta: true },
        });
        const provider = makeProvider(emu.baseUrl);
        const conn = await open(provider);
        const turns = await drive(provider, conn, 'w');
        const finish = ofType(turns[0]!.events, 'local.chunk')
          .map((e) => e['chunk'] as { choices: { finish_reason: unknown; delta: Json }[] })
          .find((c) => c.choices[0]?.finish_reason === 'tool_calls');
        expect(finish?.choices[0]!.delta['tool_calls']).toBeDefined();
        expect(turns[0]!.customToolUses.map((u) => [u.id, u.input])).toEqual([
          ['call_e0_0', { city: 'Oslo' }],
          ['call_e0_1', { tz: 'UTC' }],
        ]);
        expect((provider.transcript(conn)[2]!['tool_calls'] as unknown[]).length).toBe(2);
        expect(turns[1]!.terminal).toBe('end_turn');
      });
    });

    describe('when parallel tool calls are interleaved by index', () => {
      it('should assemble each call from its own deltas, in index order', async () => {
        await startEmu({
          script: [
            {
              toolCalls: [
                { name: 'get_weather', arguments: { city: 'Oslo, Norway' } },
                { name: 'get_time', arguments: { tz: 'Europe/Oslo' } },
                { name: 'get_weather', arguments: { city: 'Lima, Peru' } },
              ],
            },
          ],
          quirks: { interleaveParallelToolCalls: true },
        });
        const provider = makeProvider(emu.baseUrl);
        const turn = await poll(provider, await open(provider), provider.kickoffInput({ prompt: 'w' }));
        const indices = ofType(turn.events, 'local.chunk').flatMap((e) =>
          (((e['chunk'] as Json)['choices'] as { delta: { tool_calls?: { index: number }[] } }[])[0]?.delta.tool_calls ?? []).map((t) => t.index),
        );
        expect(indices.slice(0, 4)).toEqual([0, 1, 2, 0]);
        expect(turn.customToolUses.map((u) => [u.id, u.name, u.input])).toEqual([
          ['call_e0_0', 'get_weather', { city: 'Oslo, Norway' }],
          ['call_e0_1', 'get_time', { tz: 'Europe/Oslo' }],
          ['call_e0_2', 'get_weather', { city: 'Lima, Peru' }],
        ]);
      });
    });

    describe('when the tool arguments are not valid JSON', () => {
      it('should surface a ToolUse with inputError and input {}, and let the loop answer it', async () => {
        await startEmu({
          script: [{ toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }, { text: 'sorry' }],
          faults: { 0: { kind: 'quirks', invalidJsonArguments: true } },
        });
        const provider = makeProvider(emu.baseUrl);
        const conn = await open(provider);
        const first = await poll(provider, conn, provider.kickoffInput({ prompt: 'w' }));
        expect(first.terminal).toBe('requires_action');
        expect(first.customToolUses).toHaveLength(1);
        expect(first.customToolUses[0]).toMatchObject({ id: 'call_e0_0', name: 'get_weather', input: {} });
        expect(first.customToolUses[0]!.inputError).toMatch(/not valid JSON/);
        const use = first.customToolUses[0]!;
        const second = await poll(provider, conn, provider.resumeInput([use], [{ toolUseId: use.id, content: use.inputError!, isError: true }]));
        expect(second.terminal).toBe('end_turn');
        const tool = messagesOf(completionBodies(emu)[1]!).find((m) => m['role'] === 'tool')!;
        expect(JSON.parse(tool['content'] as string)).toEqual({ error: use.inputError, isError: true });
      });
    });
  });

  describe('loop guards', () => {
    describe('when the model repeats a call with the same name and (reordered) arguments', () => {
      it('should answer the repeat in history with a duplicate notice, not surface it, and answer every id once', async () => {
        await startEmu({
          script: [
            { toolCalls: [{ id: 'A', name: 'get_weather', arguments: '{"city":"Oslo","unit":"C"}' }] },
            {
              toolCalls: [
                { id: 'B', name: 'get_weather', arguments: '{"unit":"C","city":"Oslo"}' },
                { id: 'C', name: 'get_time', arguments: {} },
              ],
            },
            { text: 'done' },
          ],
        });
        const provider = makeProvider(emu.baseUrl);
        const ran: string[] = [];
        const turns = await drive(provider, await open(provider), 'w', (u) => {
          ran.push(u.id);
          return { toolUseId: u.id, content: 'r', isError: false };
        });
        expect(ran).toEqual(['A', 'C']);
        expect(turns[1]!.customToolUses.map((u) => u.id)).toEqual(['C']);
        expect(ofType(turns[1]!.events, 'local.duplicate_tool_call')).toEqual([
          { type: 'local.duplicate_tool_call', id: 'B', toolUseId: 'B', name: 'get_weather', input: { unit: 'C', city: 'Oslo' } },
        ]);
        const events = turns[1]!.events.map((e) => e['type']).filter((t) => t !== 'local.chunk');
        expect(events).toEqual(['local.duplicate_tool_call', 'local.model_response']);
        const last = messagesOf(completionBodies(emu)[2]!);
        const toolMessages = last.filter((m) => m['role'] === 'tool');
        expect(toolMessages.map((m) => m['tool_call_id'])).toEqual(['A', 'B', 'C']);
        expect(JSON.parse(toolMessages[1]!['content'] as string)).toMatchObject({ duplicate: true });
        expect(turns[2]!.terminal).toBe('end_turn');
      });
    });

    describe('when the model repeats a call that failed (a retry of a transient failure)', () => {
      it('should run it again: a failed call has no result to repeat', async () => {
        await startEmu({
          script: [
            { toolCalls: [{ id: 'A', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
            { toolCalls: [{ id: 'B', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
            { toolCalls: [{ id: 'C', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
            { text: 'done' },
          ],
        });
        const provider = makeProvider(emu.baseUrl);
        const ran: string[] = [];
        const turns = await drive(provider, await open(provider), 'w', (u) => {
          ran.push(u.id);
          // The first run fails (a timeout, say); the retry succeeds; the third call repeats a success.
          return u.id === 'A' ? { toolUseId: u.id, content: 'upstream timed out', isError: true } : { toolUseId: u.id, content: 'rain', isError: false };
        });
        expect(ran).toEqual(['A', 'B']);
        expect(ofType(turns[2]!.events, 'local.duplicate_tool_call').map((e) => e['id'])).toEqual(['C']);
        expect(turns.at(-1)!.terminal).toBe('end_turn');
      });
    });

    describe('when every call of a turn is a duplicate', () => {
      it('should report requires_action with continueWithoutTools, and continue on an empty resume', async () => {
        await startEmu({
          script: [
            { toolCalls: [{ id: 'A', name: 'get_time', arguments: {} }] },
            { toolCalls: [{ id: 'B', name: 'get_time', arguments: {} }] },
            { text: 'done' },
          ],
        });
        const provider = makeProvider(emu.baseUrl);
        const conn = await open(provider);
        const first = await poll(provider, conn, provider.kickoffInput({ prompt: 'time' }));
        const second = await poll(provider, conn, provider.resumeInput(first.customToolUses, [{ toolUseId: 'A', content: 'noon', isError: false }]));
        expect(second).toMatchObject({ terminal: 'requires_action', customToolUses: [], continueWithoutTools: true });
        const third = await poll(provider, conn, provider.resumeInput([], []));
        expect(third.terminal).toBe('end_turn');
        expect(first.continueWithoutTools).toBeUndefined();
        const answered = messagesOf(completionBodies(emu)[2]!)
          .filter((m) => m['role'] === 'tool')
          .map((m) => m['tool_call_id']);
        expect(answered).toEqual(['A', 'B']);
      });
    });

    describe('when a new user message follows', () => {
      it('should forget earlier calls, so the same call runs again', async () => {
        await startEmu({
          script: [
            { toolCalls: [{ id: 'A', name: 'get_time', arguments: {} }] },
            { text: 'noon' },
            { toolCalls: [{ id: 'B', name: 'get_time', arguments: {} }] },
          ],
        });
        const provider = makeProvider(emu.baseUrl);
        const conn = await open(provider);
        await drive(provider, conn, 'time');
        const again = await poll(provider, conn, provider.userInput('and now?'));
        expect(again.customToolUses.map((u) => u.id)).toEqual(['B']);
      });
    });

    describe('when one tool fails twice in a row', () => {
      it('should append a corrective user message naming the tool and the error after the second failure only', async () => {
        await startEmu({
          script: [
            { toolCalls: [{ name: 'get_weather', arguments: { city: '' } }] },
            { toolCalls: [{ name: 'get_weather', arguments: { city: ' ' } }] },
            { text: 'giving up' },
          ],
        });
        const provider = makeProvider(emu.baseUrl);
        const turns = await drive(provider, await open(provider), 'w', (u) => ({ toolUseId: u.id, content: 'city must not be empty', isError: true }));
        expect(ofType(turns[1]!.events, 'local.directive')).toEqual([]);
        const directives = ofType(turns[2]!.events, 'local.directive');
        expect(directives).toHaveLength(1);
        expect(directives[0]).toMatchObject({ role: 'corrective' });
        expect(directives[0]!['text']).toContain('get_weather');
        expect(directives[0]!['text']).toContain('city must not be empty');
        const last = messagesOf(completionBodies(emu)[2]!);
        expect(last[last.length - 1]).toEqual({ role: 'user', content: directives[0]!['text'] });
        expect(last[last.length - 2]).toMatchObject({ role: 'tool', content: JSON.stringify({ error: 'city must not be empty', isError: true }) });
      });
    });

    describe('when a success sits between two failures', () => {
      it('should not append a corrective', async () => {
        await startEmu({
          script: [
            { toolCalls: [{ name: 'get_weather', arguments: { city: 'a' } }] },
            { toolCalls: [{ name: 'get_weather', arguments: { city: 'b' } }] },
            { toolCalls: [{ name: 'get_weather', arguments: { city: 'c' } }] },
            { text: 'done' },
          ],
        });
        const provider = makeProvider(emu.baseUrl);
        const outcomes = [true, false, true];
        let i = 0;
        const turns = await drive(provider, await open(provider), 'w', (u) => ({ toolUseId: u.id, content: 'bad', isError: outcomes[i++]! }));
        expect(turns.flatMap((t) => ofType(t.events, 'local.directive'))).toEqual([]);
      });
    });

    describe('when the next model call would reach maxTurns', () => {
      it('should append the final-turn directive before that call only, and reset on a new user message', async () => {
        await startEmu({
          script: [{ toolCalls: [{ name: 'get_time', arguments: {} }] }, { text: 'Noon.' }, { text: 'Still noon.' }],
        });
        const provider = makeProvider(emu.baseUrl, { maxTurns: 2 });
        const conn = await open(provider);
        const turns = await drive(provider, conn, 'time?');
        expect(ofType(turns[0]!.events, 'local.directive')).toEqual([]);
        expect(ofType(turns[1]!.events, 'local.directive')).toEqual([expect.objectContaining({ type: 'local.directive', role: 'final_turn' })]);
        expect(turns[1]!.events[0]!['type']).toBe('local.directive');
        const second = messagesOf(completionBodies(emu)[1]!);
        expect(second.slice(-2).map((m) => m['role'])).toEqual(['tool', 'user']);
        expect(second[second.length - 1]!['content']).toMatch(/^FINAL TURN/);

        const followUp = await poll(provider, conn, provider.userInput('again?'));
        expect(ofType(followUp.events, 'local.directive')).toEqual([]);
      });
    });

    describe('when maxTurns is 1', () => {
      it('should put the directive on the very first call', async () => {
        await startEmu({ script: [{ text: 'x' }] });
        const provider = makeProvider(emu.baseUrl, { maxTurns: 1 });
        const turn = await poll(provider, await open(provider), provider.kickoffInput({ prompt: 'hi' }));
        expect(ofType(turn.events, 'local.directive')).toHaveLength(1);
        expect(messagesOf(completionBodies(emu)[0]!).map((m) => m['role'])).toEqual(['system', 'user', 'user']);
      });
    });
  });

  describe('.open', () => {
    describe('when given a history and a session id (reattach)', () => {
      it('should re-seed the history verbatim, keep the id and report resumed', async () => {
        await startEmu({ script: [{ text: 'welcome back' }] });
        const provider = makeProvider(emu.baseUrl);
        const history = [
          { role: 'system', content: 'Old system prompt.' },
          { role: 'user', content: 'first' },
          { role: 'assistant', content: 'answer' },
        ];
        const conn = await open(provider, { sessionId: 'local-abc', history });
        expect(provider.sessionId(conn)).toBe('local-abc');
        expect(provider.resumed(conn)).toBe(true);
        await poll(provider, conn, provider.userInput('second'));
        expect(messagesOf(completionBodies(emu)[0]!)).toEqual([...history, { role: 'user', content: 'second' }]);
      });
    });

    describe('when the restored history reused a tool-call id and still owes the model that call', () => {
      it("should report the owed call under the id the live session gave it, and answer it with the model's id", async () => {
        await startEmu({
          script: [
            { toolCalls: [{ id: 'x', name: 'get_time', arguments: {} }] },
            {
              toolCalls: [
                { id: 'x', name: 'get_weather', arguments: { city: 'Oslo' } },
                { id: 'x', name: 'get_weather', arguments: { city: 'Rome' } },
              ],
            },
            { text: 'done' },
          ],
        });
        const provider = makeProvider(emu.baseUrl);
        const live = await open(provider);
        const first = await poll(provider, live, provider.kickoffInput({ prompt: 'go' }));
        const second = await poll(provider, live, provider.resumeInput(first.customToolUses, [{ toolUseId: 'x', content: '12:00', isError: false }]));
        expect([first.customToolUses.map((u) => u.id), second.customToolUses.map((u) => u.id)]).toEqual([['x'], ['x#2.0', 'x#2.1']]);

        // A restart: the conversation comes back from the transcript alone.
        const restored = await open(provider, { sessionId: live.sessionId, history: provider.transcript(live) as Record<string, unknown>[] });
        const owed = provider.unansweredToolUses(restored);
        expect(owed).toEqual(second.customToolUses);
        const third = await poll(
          provider,
          restored,
          provider.resumeInput(
            owed,
            owed.map((u) => ({ toolUseId: u.id, content: `weather ${String(u.input['city'])}`, isError: false })),
          ),
        );
        expect(third.text).toBe('done');
        const sent = messagesOf(completionBodies(emu)[2]!).filter((m) => m['role'] === 'tool');
        expect(sent.map((m) => [m['tool_call_id'], m['content']])).toEqual([
          ['x', '12:00'],
          ['x', 'weather Oslo'],
          ['x', 'weather Rome'],
        ]);
      });
    });

    describe('when an input seeded assistant messages whose call id the model then reuses', () => {
      it('should count the seeded calls too, live and after a restore', async () => {
        await startEmu({ script: [{ toolCalls: [{ id: 'x', name: 'get_time', arguments: {} }] }] });
        const provider = makeProvider(emu.baseUrl);
        const live = await open(provider);
        const seeded: LocalInput = {
          kind: 'messages',
          messages: [
            { role: 'user', content: 'earlier' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
            { role: 'tool', tool_call_id: 'x', content: '11:00' },
            { role: 'user', content: 'and now?' },
          ],
        };
        const turn = await poll(provider, live, seeded);
        expect(turn.customToolUses.map((u) => u.id)).toEqual(['x#2.0']);
        const restored = await open(provider, { sessionId: live.sessionId, history: provider.transcript(live) as Record<string, unknown>[] });
        expect(provider.unansweredToolUses(restored).map((u) => u.id)).toEqual(['x#2.0']);
      });
    });

    describe('when one of two calls sharing an id was answered in the restored history', () => {
      it('should owe the model only the other one', async () => {
        const provider = makeProvider('http://127.0.0.1:9/v1');
        const history = [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'x', content: '12:00' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'x', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
              { id: 'x', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'x', content: 'sunny' },
        ];
        const conn = await open(provider, { sessionId: 's', history });
        expect(provider.unansweredToolUses(conn)).toEqual([{ id: 'x#2.1', name: 'get_weather', input: { city: 'Rome' } }]);
      });
    });

    describe('when the spec has no tools', () => {
      it('should omit tools from the request', async () => {
        await startEmu({ script: [{ text: 'x' }] });
        const provider = makeProvider(emu.baseUrl);
        const conn = await provider.open({ spec: { name: 'n', tools: [] }, signal: new AbortController().signal });
        await poll(provider, conn, provider.kickoffInput({}));
        const body = completionBodies(emu)[0]!;
        expect(body['tools']).toBeUndefined();
        expect(messagesOf(body)).toEqual([{ role: 'user', content: 'Begin.' }]);
      });
    });
  });

  describe('.normalize', () => {
    const provider = new LocalAgentProvider(new LocalProviderOptionsClass(), new HttpClientFactoryImpl(), new MemoryLogger());
    const response = (message: Json, finish: unknown): RawEvent => ({
      type: 'local.model_response',
      message,
      finish_reason: finish,
      usage: undefined,
      streamed: false,
    });

    describe('when no model response is among the events', () => {
      it('should report terminated with an undefined stop reason', () => {
        const events = [{ type: 'local.directive', role: 'final_turn', text: 'x' }];
        expect(provider.normalize(events)).toEqual({
          terminal: 'terminated',
          stopReason: undefined,
          text: '',
          customToolUses: [],
          serverToolUses: [],
          usage: { inputTokens: 0, outputTokens: 0 },
          events,
        });
      });
    });

    describe('when the finish reason varies', () => {
      it('should map stop, tool_calls, length, and let surviving calls win over stop', () => {
        const call = { id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":[1]}' } };
        expect(provider.normalize([response({ role: 'assistant', content: 'x' }, 'stop')]).terminal).toBe('end_turn');
        expect(provider.normalize([response({ role: 'assistant', content: null }, 'tool_calls')]).terminal).toBe('requires_action');
        expect(provider.normalize([response({ role: 'assistant', content: 'x' }, 'length')]).terminal).toBe('terminated');
        const won = provider.normalize([response({ role: 'assistant', content: null, tool_calls: [call] }, 'stop')]);
        expect(won).toMatchObject({ terminal: 'requires_action', stopReason: 'stop', customToolUses: [{ id: 'c', name: 'f', input: { a: [1] } }] });
      });
    });

    describe('when arguments are a JSON non-object', () => {
      it('should set inputError', () => {
        const call = { id: 'c', type: 'function', function: { name: 'f', arguments: '[1,2]' } };
        const turn = provider.normalize([response({ role: 'assistant', content: null, tool_calls: [call] }, 'tool_calls')]);
        expect(turn.customToolUses[0]).toMatchObject({ input: {}, inputError: expect.stringContaining('JSON object') });
      });
    });

    describe('when the events are odd', () => {
      it('should not throw', () => {
        expect(() => provider.normalize([{ type: 'local.model_response' }, { nope: 1 }])).not.toThrow();
        expect(provider.normalize([{ type: 'local.model_response', message: 'x' }]).terminal).toBe('terminated');
      });
    });
  });
});
