import { lastValueFrom, toArray } from 'rxjs';
import type { AgentProvider, StreamingProvider, TurnProvider } from '../../src/core/plugin/agent-provider.js';
import { ScriptedProvider, ev } from '../../src/testing/scripted-provider.js';

const signal = (): AbortSignal => new AbortController().signal;

describe('ScriptedProvider', () => {
  describe('as an AgentProvider', () => {
    it('should be a TurnProvider by default and a StreamingProvider with mode streaming', () => {
      // Typed as the union: an instance of either mode is an AgentProvider (checked by tsc).
      const providers: AgentProvider[] = [new ScriptedProvider({ turns: [] }), new ScriptedProvider({ mode: 'streaming', turns: [] })];
      const shapes = providers.map((p) => {
        if (p.mode === 'streaming') {
          const s: StreamingProvider = p;
          return [s.mode, typeof s.stream, typeof s.pushInput, typeof s.decode];
        }
        const t: TurnProvider = p;
        return [t.mode, typeof t.pollTurn];
      });
      expect(shapes).toEqual([
        ['request_response', 'function'],
        ['streaming', 'function', 'function', 'function'],
      ]);
    });
  });

  describe('.textDelta', () => {
    describe('when a request/response turn emits text events', () => {
      it('should report each text event of the conn as a delta under its message id', async () => {
        const p = new ScriptedProvider({ turns: [{ events: [ev.text('t1', 'Hel'), ev.text('t2', 'lo'), ev.idle('i', 'end_turn')] }] });
        const conn = await p.open({ spec: { name: 's', tools: [] }, signal: signal() });
        const events = await lastValueFrom(p.pollTurn(conn, p.kickoffInput({ prompt: 'go' })).pipe(toArray()));
        expect(events.map((e) => p.textDelta(conn, e))).toEqual([{ text: 'Hel', messageId: 't1' }, { text: 'lo', messageId: 't2' }, undefined]);
      });
    });

    describe('when text deltas are turned off', () => {
      it('should report none', async () => {
        const p = new ScriptedProvider({ turns: [], textDeltas: false });
        const conn = await p.open({ spec: { name: 's', tools: [] }, signal: signal() });
        expect(p.textDelta(conn, ev.text('t', 'x'))).toBeUndefined();
      });
    });
  });
});
