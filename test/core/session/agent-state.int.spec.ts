import { lastValueFrom, toArray } from 'rxjs';
import { AgentRx } from '../../../src/agentrx.js';
import { jsonProblem } from '../../../src/core/session/agent-state.js';
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
