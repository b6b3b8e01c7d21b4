import { pack, unpack } from '../../../../src/core/store/memory/packed-text.js';
import { logText, parseLog } from '../../../../src/core/store/memory/sealed-log.js';
import type { SessionEvent } from '../../../../src/core/events/session-event.js';

/** A log as a Session writes it: agentrx events, host events with and without a dedupe id, a clock step back. */
function sessionLog(sessionId = 'local-7f3e'): SessionEvent[] {
  return [
    {
      seq: 41,
      sessionId,
      turn: 0,
      provider: 'local',
      source: 'agentrx',
      raw: { type: 'agentrx.run_started', runId: 'r', threadId: sessionId, resumed: false },
      at: 1_796_444_222_527,
    },
    {
      seq: 42,
      sessionId,
      turn: 1,
      provider: 'local',
      source: 'provider',
      raw: { type: 'local.chunk', chunk: { id: 'c0', choices: [{ delta: { content: 'Hé 🚀' } }] } },
      at: 1_796_444_222_691,
    },
    {
      seq: 43,
      sessionId,
      turn: 1,
      provider: 'local',
      source: 'agentrx',
      raw: { type: 'agentrx.text_delta', text: 'Hé 🚀', messageId: 'c0' },
      at: 1_796_444_222_691,
    },
    {
      seq: 44,
      sessionId,
      turn: 1,
      provider: 'local',
      source: 'provider',
      id: 'evt_9',
      raw: { type: 'span.model_request_end', id: 'evt_9' },
      at: 1_796_444_222_600,
    },
    {
      seq: 45,
      sessionId,
      turn: 2,
      provider: 'local',
      source: 'agentrx',
      raw: { type: 'agentrx.diagnostic', message: 'line\n"quoted"' },
      at: 1_796_444_222_724,
    },
  ];
}

const roundTrip = (log: SessionEvent[]): SessionEvent[] => parseLog(unpack(pack(logText(log))));
/** Each envelope's JSON text: the same keys, in the same order, with the same values. */
const texts = (log: readonly SessionEvent[]): string[] => log.map((e) => JSON.stringify(e));

describe('logText / parseLog', () => {
  describe('when every envelope has the shape a Session gives it', () => {
    it('should give back equal envelopes, keys in the same order', () => {
      const log = sessionLog();
      const back = roundTrip(log);

      expect(back).toEqual(log);
      expect(texts(back)).toEqual(texts(log));
    });

    it('should pack smaller than the JSON array of the envelopes', () => {
      const log = Array.from({ length: 40 }, (_, i) => sessionLog().map((e) => ({ ...e, seq: e.seq + 5 * i }))).flat();

      expect(pack(logText(log)).length).toBeLessThan(0.9 * pack(JSON.stringify(log)).length);
    });

    it('should hand out fresh objects on each read', () => {
      const text = logText(sessionLog());
      const first = parseLog(text);
      (first[2]!.raw as { text: string }).text = 'changed';

      expect(parseLog(text)).toEqual(sessionLog());
    });
  });

  describe('when an envelope has another shape', () => {
    const variants: [string, (log: SessionEvent[]) => unknown][] = [
      ['a key no envelope has', (log) => Object.assign(log[2]!, { note: 'kept' })],
      ['no session id', (log) => log.forEach((e) => Object.assign(e, { sessionId: undefined }))],
      ['another session id', (log) => Object.assign(log[3]!, { sessionId: 'other' })],
      ['another provider', (log) => Object.assign(log[1]!, { provider: 'cma' })],
      ['a time with a fraction', (log) => Object.assign(log[4]!, { at: 1_796_444_222_724.5 })],
      ['a gap in seq', (log) => Object.assign(log[4]!, { seq: 50 })],
      ['a dedupe id that is not a string', (log) => Object.assign(log[1]!, { id: 7 })],
      ['another source', (log) => Object.assign(log[0]!, { source: 'replay' })],
    ];

    it.each(variants)('should keep %s as given', (_, change) => {
      const log = sessionLog();
      change(log);
      const asJson = JSON.parse(JSON.stringify(log)) as SessionEvent[];

      expect(texts(roundTrip(log))).toEqual(texts(asJson));
    });
  });

  it('should hold no raw line break (the memory store divides record and log at the first one)', () => {
    expect(logText(sessionLog())).not.toContain('\n');
  });

  describe('when the text was sealed as the JSON array of the envelopes', () => {
    it('should read it as it is', () => {
      const log = sessionLog();

      expect(parseLog(JSON.stringify(log))).toEqual(log);
    });
  });
});
