import type { SessionEvent } from '../../../src/core/events/session-event.js';
import { NO_HOST_EVENTS } from '../../../src/core/plugin/host-event.js';
import { Ingestion, UNRETAINED_HISTORY } from '../../../src/core/session/ingestion.js';
import { ev } from '../../../src/testing/scripted-provider.js';
import { agentrxTypes, recordingIngestion, streamingProvider } from './session-parts.fixtures.js';

describe('Ingestion', () => {
  describe('.ingest and .emit', () => {
    describe("when provider events with text, duplicates and the session's own events are mixed", () => {
      const { ingestion, envs } = recordingIngestion();
      ingestion.sessionId = 's-1';
      ingestion.beginRequest();
      ingestion.emit({ type: 'agentrx.run_started', runId: 'r', threadId: 't', resumed: false });
      const fresh = [
        ingestion.ingest({ id: 'a', type: 'text', text: 'Hel' }),
        ingestion.ingest({ id: 'a', type: 'text', text: 'Hel' }),
        ingestion.ingest({ type: 'usage' }),
        ingestion.ingest({ id: 'b', type: 'text', text: 'lo' }),
      ];
      const turn = ingestion.closeTurn();
      ingestion.emit({ type: 'agentrx.diagnostic', message: 'after the turn' });

      it('should report duplicates (by id) as not ingested, and events without an id as fresh', () => {
        expect(fresh).toEqual([true, false, true, true]);
      });

      it('should number envelopes gap-free and put each text delta right after its provider event', () => {
        expect(envs.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
        expect(envs.map((e) => (e.source === 'provider' ? `p:${String(e.raw['id'] ?? e.raw['type'])}` : e.raw.type))).toEqual([
          'agentrx.run_started',
          'p:a',
          'agentrx.text_delta',
          'p:usage',
          'p:b',
          'agentrx.text_delta',
          'agentrx.diagnostic',
        ]);
      });

      it('should stamp provider events with the turn in progress and its own events with the last closed turn', () => {
        expect(turn).toBe(1);
        expect(envs.map((e) => e.turn)).toEqual([0, 1, 1, 1, 1, 1, 1]);
        expect(envs.every((e) => e.sessionId === 's-1' && e.provider === 'test')).toBe(true);
      });

      it("should keep the request's provider events (never the deltas) as history", () => {
        expect(ingestion.history.map((e) => e['id'] ?? e['type'])).toEqual(['a', 'usage', 'b']);
        expect(agentrxTypes(envs)).toEqual(['agentrx.run_started', 'agentrx.text_delta', 'agentrx.text_delta', 'agentrx.diagnostic']);
      });

      it('should tell reconnect where it stands through the cursor', () => {
        const cursor = ingestion.cursor();
        expect([cursor.ingested, cursor.has('a'), cursor.has('b'), cursor.has('z')]).toEqual([2, true, true, false]);
      });
    });

    describe('when a request ingests more events than the unretained window', () => {
      it('should keep a bounded history without retainEvents and all of it with', () => {
        const total = 3 * UNRETAINED_HISTORY;
        const bounded = recordingIngestion({ dedupeWindow: 10 * total });
        const retained = recordingIngestion({ dedupeWindow: 10 * total, retainEvents: true });
        for (let i = 0; i < total; i++) {
          bounded.ingestion.ingest({ id: `e${i}` });
          retained.ingestion.ingest({ id: `e${i}` });
        }
        expect(bounded.ingestion.history.length).toBeLessThanOrEqual(2 * UNRETAINED_HISTORY);
        expect(bounded.ingestion.history.at(-1)).toEqual({ id: `e${total - 1}` });
        expect(retained.ingestion.history).toHaveLength(total);
      });
    });

    describe('when a request reached its terminal (.releaseHistory)', () => {
      it('should let go of its provider events unless they are retained for the result, and keep the dedupe window', () => {
        const bounded = recordingIngestion();
        const retained = recordingIngestion({ retainEvents: true });
        for (const { ingestion } of [bounded, retained]) {
          ingestion.ingest({ id: 'a' });
          ingestion.releaseHistory();
        }
        expect(bounded.ingestion.history).toEqual([]);
        expect(retained.ingestion.history).toEqual([{ id: 'a' }]);
        expect(bounded.ingestion.ingest({ id: 'a' })).toBe(false);
      });
    });

    describe('when a new request begins', () => {
      it('should restart the turn count and the history but keep the dedupe window', () => {
        const { ingestion } = recordingIngestion();
        ingestion.ingest({ id: 'a' });
        ingestion.closeTurn();
        ingestion.beginRequest();
        expect([ingestion.turn, ingestion.history.length, ingestion.ingest({ id: 'a' })]).toEqual([0, 0, false]);
      });
    });
  });

  describe('.forProvider', () => {
    describe('when the provider decodes host-run tool results', () => {
      const { scripted } = streamingProvider({ turns: [] });
      const conns: unknown[] = [];
      const decode = scripted.decode.bind(scripted);
      scripted.decode = (conn, event) => {
        conns.push(conn);
        return decode(conn, event);
      };
      const conn = { sessionId: 'sess', resumed: false };
      const ingestion = Ingestion.forProvider(scripted, () => conn, { dedupeWindow: 10, retainEvents: false });
      const envs: SessionEvent[] = [];
      ingestion.events$.subscribe((e) => envs.push(e));
      const result = ev.hostToolResult('r1', 'srv-1', 'denied', true);
      const fresh = [
        ingestion.ingest(ev.serverToolUse('s1', 'web_search')),
        ingestion.ingest(result),
        ingestion.ingest(result),
        ingestion.ingest(ev.text('t1', 'ok')),
      ];

      it('should follow the provider event with an agentrx.host_tool_result right after it, once', () => {
        expect(fresh).toEqual([true, true, false, true]);
        expect(envs.map((e) => [e.seq, e.source === 'provider' ? `p:${String(e.raw['id'])}` : e.raw.type])).toEqual([
          [1, 'p:s1'],
          [2, 'p:r1'],
          [3, 'agentrx.host_tool_result'],
          [4, 'p:t1'],
          [5, 'agentrx.text_delta'],
        ]);
        expect(envs[2]!.raw).toEqual({ type: 'agentrx.host_tool_result', toolUse: { id: 'srv-1' }, result: { content: 'denied', isError: true } });
        expect(envs[2]!.turn).toBe(1);
      });

      it("should decode with the session's conn, once per ingested event, and keep only provider events as history", () => {
        expect(conns).toHaveLength(3);
        expect(conns.every((c) => c === conn)).toBe(true);
        expect(ingestion.history.map((e) => e['id'])).toEqual(['s1', 'r1', 't1']);
      });
    });

    describe('when the provider decodes nothing of an event', () => {
      it('should synthesize nothing for it', () => {
        const { scripted } = streamingProvider({ turns: [] });
        const provider = Object.assign(Object.create(scripted) as typeof scripted, { decode: () => NO_HOST_EVENTS });
        const ingestion = Ingestion.forProvider(provider, () => ({}), { dedupeWindow: 10, retainEvents: false });
        const envs: SessionEvent[] = [];
        ingestion.events$.subscribe((e) => envs.push(e));
        ingestion.ingest(ev.hostToolResult('r1', 'srv-1', 'found'));
        expect(agentrxTypes(envs)).toEqual([]);
        expect(envs).toHaveLength(1);
      });
    });
  });

  describe('when a subscriber of events$ emits while an envelope is being delivered', () => {
    it('should stamp the nested event at once, before what the provider event still carries', () => {
      const { ingestion, envs } = recordingIngestion();
      ingestion.events$.subscribe((e) => {
        if (e.source === 'provider' && e.raw['id'] === 'a') ingestion.emit({ type: 'agentrx.diagnostic', message: 'nested' });
      });
      expect(ingestion.ingest({ id: 'a', type: 'text', text: 'Hi' })).toBe(true);
      expect(envs.map((e) => `${e.seq}:${e.source === 'provider' ? 'p' : e.raw.type}`)).toEqual(['1:p', '2:agentrx.diagnostic', '3:agentrx.text_delta']);
      expect(ingestion.ingest({ id: 'a', type: 'text', text: 'Hi' })).toBe(false);
      expect(envs).toHaveLength(3);
    });
  });

  describe('.hostHistory', () => {
    describe('when the provider decodes tool uses, answers and turn ends', () => {
      it('should keep them for the request (never as envelopes), and let go of them with the history', () => {
        const { scripted } = streamingProvider({ turns: [] });
        const ingestion = Ingestion.forProvider(scripted, () => ({ sessionId: 's', resumed: false }), { dedupeWindow: 10, retainEvents: false });
        const envs: SessionEvent[] = [];
        ingestion.events$.subscribe((e) => envs.push(e));
        for (const e of [ev.toolUse('u1', 'echo'), ev.toolResult('r1', 'u1'), ev.idle('i1', 'requires_action', ['u1'])]) ingestion.ingest(e);
        expect(ingestion.hostHistory.map((h) => h.kind)).toEqual(['tool_use', 'tool_answered', 'turn_end']);
        expect(agentrxTypes(envs)).toEqual([]);
        ingestion.releaseHistory();
        expect(ingestion.hostHistory).toEqual([]);
      });
    });
  });

  describe('.complete', () => {
    it('should complete events$ and drop anything ingested afterwards', () => {
      const { ingestion, envs } = recordingIngestion();
      let completed = false;
      ingestion.events$.subscribe({ complete: () => (completed = true) });
      ingestion.ingest({ id: 'a' });
      ingestion.complete();
      ingestion.emit({ type: 'agentrx.diagnostic', message: 'late' });
      expect([completed, envs.length]).toEqual([true, 1]);
    });
  });
});
