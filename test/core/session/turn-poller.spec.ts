import { getEventListeners } from 'node:events';
import { AgentRxError } from '../../../src/core/errors.js';
import { TurnPoller } from '../../../src/core/session/turn-poller.js';
import { MemoryLogger } from '../../../src/core/logger.js';
import { ev } from '../../../src/testing/scripted-provider.js';
import { RecordingLinkEvents, recordingIngestion, turnProvider } from './session-parts.fixtures.js';

describe('TurnPoller', () => {
  const conn = { sessionId: 's-1', resumed: false };

  describe('.send', () => {
    describe('when the provider completes each poll synchronously over many turns', () => {
      it('should report each batch as one turn and leave no abort listener behind', async () => {
        const turns = Array.from({ length: 30 }, (_, i) => ({ events: [ev.text(`t${i}`, 'x'), ev.idle(`i${i}`, 'end_turn')] }));
        const { provider } = turnProvider({ turns });
        const { ingestion } = recordingIngestion();
        const events = new RecordingLinkEvents();
        const poller = new TurnPoller(provider, () => conn, ingestion, events, new MemoryLogger());
        const signal = new AbortController().signal;
        for (let i = 0; i < 30; i++) await poller.send({ kind: 'user', text: 'go' }, signal);
        expect(events.turns.map((t) => t.map((e) => e['id']))).toEqual(turns.map((t) => t.events.map((e) => e['id'])));
        expect(getEventListeners(signal, 'abort')).toHaveLength(0);
      });
    });

    describe('when a batch repeats an event already ingested', () => {
      it('should ingest it once and leave it out of the turn', async () => {
        const { provider } = turnProvider({
          turns: [
            { events: [ev.text('a', 'one'), ev.idle('i1', 'end_turn')] },
            { events: [ev.text('a', 'one'), ev.text('b', 'two'), ev.idle('i2', 'end_turn')] },
          ],
        });
        const { ingestion, envs } = recordingIngestion();
        const events = new RecordingLinkEvents();
        const poller = new TurnPoller(provider, () => conn, ingestion, events, new MemoryLogger());
        const signal = new AbortController().signal;
        await poller.send({ kind: 'user', text: '1' }, signal);
        await poller.send({ kind: 'user', text: '2' }, signal);
        expect(events.turns[1]!.map((e) => e['id'])).toEqual(['b', 'i2']);
        expect(envs.filter((e) => e.source === 'provider').map((e) => e.raw['id'])).toEqual(['a', 'i1', 'b', 'i2']);
      });
    });

    describe('when the session aborts during a hanging poll', () => {
      it('should reject with the abort reason and unsubscribe the poll', async () => {
        const { provider, scripted } = turnProvider({ turns: [{ events: [ev.text('a', 'partial')], hang: true }] });
        const { ingestion } = recordingIngestion();
        const poller = new TurnPoller(provider, () => conn, ingestion, new RecordingLinkEvents(), new MemoryLogger());
        const ctrl = new AbortController();
        const sent = poller.send({ kind: 'user', text: 'go' }, ctrl.signal);
        ctrl.abort(new AgentRxError('timeout', 'too slow'));
        await expect(sent).rejects.toMatchObject({ code: 'timeout' });
        expect(scripted.aborted).toBe(1);
      });
    });

    describe('when the poll fails', () => {
      it('should reject with a typed AgentRxError and report no turn', async () => {
        const { provider } = turnProvider({ turns: [{ events: [], fail: new AgentRxError('http_error', 'bad gateway', { status: 502 }) }] });
        const { ingestion } = recordingIngestion();
        const events = new RecordingLinkEvents();
        const poller = new TurnPoller(provider, () => conn, ingestion, events, new MemoryLogger());
        await expect(poller.send({ kind: 'user', text: 'go' }, new AbortController().signal)).rejects.toMatchObject({ code: 'http_error' });
        expect(events.turns).toEqual([]);
      });
    });
  });

  describe('.release', () => {
    it('should close the conn once, and never interrupt (a request/response host has no running turn to stop)', async () => {
      const { provider, scripted } = turnProvider({ turns: [] });
      const poller = new TurnPoller(provider, () => conn, recordingIngestion().ingestion, new RecordingLinkEvents(), new MemoryLogger());
      await poller.release();
      expect([scripted.closed, scripted.interrupts]).toEqual([1, 0]);
    });
  });
});
