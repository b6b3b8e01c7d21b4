import { lastValueFrom, toArray } from 'rxjs';
import { AgentRx } from '../../../src/agentrx.js';
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
      const provider = new ScriptedProvider({ turns: [{ events: [ev.toolUse('u1', 'bump', {}), ev.idle('i1', 'requires_action', ['u1'])] }, { events: [ev.text('t2', 'Done.'), ev.idle('i2', 'end_turn')] }] });
      rx = await AgentRx.create({ defaults: false, providers: [provider], tools: [bump], config: { provider: provider.id, logLevel: 'silent', consumers: { terminal: false } } });
      const initial = { count: 1, theme: 'dark' };
      const s = rx.start({ prompt: 'bump it', state: initial });
      const agui = lastValueFrom(s.agui$.pipe(toArray()));
      await s.result;
      s.close();
      const events = await agui;
      const state = events.filter((e) => e.type === 'STATE_SNAPSHOT' || e.type === 'STATE_DELTA');
      expect(state).toEqual([
        expect.objectContaining({ type: 'STATE_SNAPSHOT', snapshot: { count: 1, theme: 'dark' } }),
        expect.objectContaining({ type: 'STATE_DELTA', delta: expect.arrayContaining([{ op: 'replace', path: '/count', value: 2 }, { op: 'add', path: '/note', value: 'bumped' }]) }),
      ]);
      // The caller's object is the client's: the session changed its own copy.
      expect(initial).toEqual({ count: 1, theme: 'dark' });
    });
  });
});
