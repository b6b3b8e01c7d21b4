import { UNRETAINED_HISTORY } from '../../../src/core/session/ingestion.js';
import { agentrxTypes, recordingIngestion } from './session-parts.fixtures.js';

describe('Ingestion', () => {
  describe('.ingest and .emit', () => {
    describe('when provider events with text, duplicates and the session\'s own events are mixed', () => {
      const { ingestion, envs } = recordingIngestion();
      ingestion.sessionId = 's-1';
      ingestion.beginRequest();
      ingestion.emit({ type: 'agentrx.run_started', runId: 'r', threadId: 't', resumed: false });
      const fresh = [ingestion.ingest({ id: 'a', type: 'text', text: 'Hel' }), ingestion.ingest({ id: 'a', type: 'text', text: 'Hel' }), ingestion.ingest({ type: 'usage' }), ingestion.ingest({ id: 'b', type: 'text', text: 'lo' })];
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

      it('should keep the request\'s provider events (never the deltas) as history', () => {
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
