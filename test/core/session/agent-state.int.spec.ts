import { lastValueFrom, toArray } from 'rxjs';
import { AgentRx } from '../../../src/agentrx.js';
import { AgentState, jsonProblem, MAX_STATE_DEPTH, stateShapeProblem } from '../../../src/core/session/agent-state.js';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import { ScriptedProvider, ev } from '../../../src/testing/scripted-provider.js';

/** A tool that changes the shared state in place, as a UI's counter would. */
const bump = defineTool({
  name: 'bump',
  description: 'Adds one to the counter.',
  inputSchema: { type: 'object', properties: {} },
  handle: (_input, ctx) => {
    const state = ctx.state!;
    state['count'] = (state['count'] as number) + 1;
    state['note'] = 'bumped';
    return `count is ${String(state['count'])}`;
  },
});

describe('the agent state shared with the client', () => {
  let rx: AgentRx | undefined;
  afterEach(async () => {
    await rx?.stop();
    rx = undefined;
  });

  describe('when a session has a state and a tool changes it', () => {
    it('should publish STATE_SNAPSHOT at the run start and the tool’s changes as a STATE_DELTA JSON Patch, never the bookkeeping', async () => {
      const provider = new ScriptedProvider({
        turns: [
          { events: [ev.toolUse('u1', 'bump', {}), ev.idle('i1', 'requires_action', ['u1'])] },
          { events: [ev.text('t2', 'Done.'), ev.idle('i2', 'end_turn')] },
        ],
      });
      rx = await AgentRx.create({
        defaults: false,
        providers: [provider],
        tools: [bump],
        config: { provider: provider.id, logLevel: 'silent', consumers: { terminal: false } },
      });
      const initial = { count: 1, theme: 'dark' };
      const s = rx.start({ prompt: 'bump it', state: initial });
      const agui = lastValueFrom(s.agui$.pipe(toArray()));
      await s.result;
      s.close();
      const events = await agui;
      const state = events.filter((e) => e.type === 'STATE_SNAPSHOT' || e.type === 'STATE_DELTA');
      expect(state).toEqual([
        expect.objectContaining({ type: 'STATE_SNAPSHOT', snapshot: { count: 1, theme: 'dark' } }),
        expect.objectContaining({
          type: 'STATE_DELTA',
          delta: expect.arrayContaining([
            { op: 'replace', path: '/count', value: 2 },
            { op: 'add', path: '/note', value: 'bumped' },
          ]),
        }),
      ]);
      // The caller's object is the client's: the session changed its own copy.
      expect(initial).toEqual({ count: 1, theme: 'dark' });
    });
  });

  describe('when a tool leaves a value in the state that is not JSON', () => {
    it('should discard that change with a diagnostic naming the path, and keep the stream and the session going', async () => {
      const spoil = defineTool({
        name: 'spoil',
        description: 'Puts a BigInt and a cycle into the state.',
        inputSchema: { type: 'object', properties: {} },
        handle: (_input, ctx) => {
          const state = ctx.state!;
          state['count'] = 2n;
          const loop: Record<string, unknown> = {};
          loop['self'] = loop;
          state['loop'] = loop;
          return 'spoiled';
        },
      });
      const provider = new ScriptedProvider({
        turns: [
          { events: [ev.toolUse('u1', 'spoil', {}), ev.idle('i1', 'requires_action', ['u1'])] },
          { events: [ev.toolUse('u2', 'bump', {}), ev.idle('i2', 'requires_action', ['u2'])] },
          { events: [ev.text('t3', 'Done.'), ev.idle('i3', 'end_turn')] },
        ],
      });
      rx = await AgentRx.create({
        defaults: false,
        providers: [provider],
        tools: [bump, spoil],
        config: { provider: provider.id, logLevel: 'silent', consumers: { terminal: false } },
      });
      const s = rx.start({ prompt: 'spoil it', state: { count: 1 } });
      const envelopes = lastValueFrom(s.events$.pipe(toArray()));
      const agui = lastValueFrom(s.agui$.pipe(toArray()));
      expect((await s.result).text).toBe('Done.');
      s.close();
      const diagnostics = (await envelopes).flatMap((e) => (e.source === 'agentrx' && e.raw.type === 'agentrx.diagnostic' ? [e.raw.message] : []));
      expect(diagnostics).toEqual([
        expect.stringMatching(
          /^tool 'spoil' left the agent state with a value that is not JSON \(\/(count: a bigint is not JSON|loop\/self: a cycle \(the object contains itself\))\); its state change was discarded$/,
        ),
      ]);
      // The next tool starts from the last published state: only its own change goes out.
      const deltas = (await agui).filter((e) => e.type === 'STATE_DELTA');
      expect(deltas).toEqual([
        expect.objectContaining({
          delta: expect.arrayContaining([
            { op: 'replace', path: '/count', value: 2 },
            { op: 'add', path: '/note', value: 'bumped' },
          ]),
        }),
      ]);
    });
  });
});

describe('jsonProblem', () => {
  it('should accept plain JSON, a shared (not cyclic) object and deep nesting', () => {
    const shared = { a: 1 };
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    expect(jsonProblem({ x: [1, 'two', null, true, { y: shared }], z: shared, deep })).toBeUndefined();
  });

  it('should name the path of what is not JSON', () => {
    expect(jsonProblem({ a: [1, Number.NaN] })).toBe('/a/1: NaN is not a JSON number');
    expect(jsonProblem({ 'a/b': { f: () => 1 } })).toBe('/a~1b/f: a function is not JSON');
    expect(jsonProblem({ when: new Date(0) })).toBe('/when: a Date instance is not a JSON object');
    expect(jsonProblem({ u: undefined })).toBe('/u: undefined is not JSON');
  });
});

describe('stateShapeProblem', () => {
  const nested = (levels: number): Record<string, unknown> => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < levels; i++) deep = { d: deep };
    return deep;
  };

  it(`should accept a state nested ${MAX_STATE_DEPTH} levels and refuse one deeper, naming the limit, at any depth without exhausting the stack`, () => {
    expect(stateShapeProblem(nested(MAX_STATE_DEPTH))).toBeUndefined();
    expect(stateShapeProblem(nested(MAX_STATE_DEPTH + 1))).toMatch(new RegExp(`^nested more than ${MAX_STATE_DEPTH} levels deep \\(at /d/d`));
    expect(stateShapeProblem(nested(5_000))).toMatch(/^nested more than/);
  });

  it.each(['__proto__', 'constructor'])("should refuse the key '%s' at any level, naming it and where", (key) => {
    const state = JSON.parse(`{"ui":{"${key}":{"polluted":true}}}`) as unknown;
    expect(stateShapeProblem(state)).toBe(`the key '${key}' (at /ui) is not allowed: AG-UI clients refuse to patch it; rename it`);
  });

  it('should make a session refuse such a state with invalid_options', () => {
    expect(() => new AgentState(nested(5_000))).toThrow(
      expect.objectContaining({ code: 'invalid_options', message: expect.stringMatching(/^state: nested more than/) }),
    );
  });
});

describe('AgentState.delta', () => {
  it("should send a tool's change through a 'constructor' key as the whole state (a snapshot), never as a patch clients refuse", () => {
    const state = new AgentState({ count: 1 });
    state.snapshot();
    state.value!['constructor'] = { name: 'x' };
    expect(state.delta()).toEqual({ ops: [], snapshot: { count: 1, constructor: { name: 'x' } } });
    // What was sent is what the next delta starts from.
    state.value!['count'] = 2;
    expect(state.delta()).toEqual({ ops: [{ op: 'replace', path: '/count', value: 2 }] });
  });

  it('should discard a change that nests the state too deep, saying so', () => {
    const state = new AgentState({});
    state.snapshot();
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 5_000; i++) deep = { d: deep };
    state.value!['deep'] = deep;
    expect(state.delta()).toEqual({ ops: [], discarded: expect.stringMatching(/^\/: nested more than/) });
    expect(state.value).toEqual({});
  });
});
