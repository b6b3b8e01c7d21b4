import { lastValueFrom, toArray } from 'rxjs';
import type { Cassette } from '../../src/core/store/cassette.js';
import type { SessionEvent } from '../../src/core/events/session-event.js';
import { MemoryLogger } from '../../src/core/logger.js';
import { SESSION_LOG_VERSION } from '../../src/core/store/session-store.js';
import { ReplayProvider } from '../../src/testing/replay-provider.js';

const use = { id: 'tu_1', name: 'echo', input: { text: 'hi' } };
const base = { sessionId: 'host-1', provider: 'bedrock-agentcore', at: 1 };
/** Two turns of a hand-built log: text + a tool use, then an answer. */
const envelopes: SessionEvent[] = [
  { ...base, seq: 1, turn: 0, source: 'agentrx', raw: { type: 'agentrx.run_started', runId: 'host-1:run-1', threadId: 'host-1', resumed: false } },
  { ...base, seq: 2, turn: 1, source: 'provider', id: 'e1', raw: { kind: 'delta', t: 'Work' } },
  { ...base, seq: 3, turn: 1, source: 'agentrx', raw: { type: 'agentrx.text_delta', text: 'Work', messageId: 'm1' } },
  { ...base, seq: 4, turn: 1, source: 'provider', raw: { kind: 'tool', id: 'tu_1' } },
  {
    ...base,
    seq: 5,
    turn: 1,
    source: 'agentrx',
    raw: {
      type: 'agentrx.turn_end',
      turn: 1,
      terminal: 'requires_action',
      stopReason: 'tool_use',
      usage: { inputTokens: 3, outputTokens: 1 },
      customToolUses: [use],
      serverToolUses: [],
    },
  },
  {
    ...base,
    seq: 6,
    turn: 1,
    source: 'agentrx',
    raw: { type: 'agentrx.tool_result', toolUse: use, result: { toolUseId: 'tu_1', content: 'HI', isError: false }, replayed: false, durationMs: 2 },
  },
  { ...base, seq: 7, turn: 2, source: 'provider', id: 'e3', raw: { kind: 'delta', t: 'Done' } },
  { ...base, seq: 8, turn: 2, source: 'agentrx', raw: { type: 'agentrx.text_delta', text: 'Done', messageId: 'm2' } },
  {
    ...base,
    seq: 9,
    turn: 2,
    source: 'agentrx',
    raw: {
      type: 'agentrx.turn_end',
      turn: 2,
      terminal: 'end_turn',
      stopReason: 'end_turn',
      usage: { inputTokens: 5, outputTokens: 2 },
      customToolUses: [],
      serverToolUses: [],
    },
  },
];
const cassette: Cassette = {
  version: SESSION_LOG_VERSION,
  record: {
    version: SESSION_LOG_VERSION,
    sessionId: 'host-1',
    provider: 'bedrock-agentcore',
    threadId: 'host-1',
    status: 'completed',
    createdAt: 1,
    updatedAt: 2,
    ledger: [],
    transcript: [{ role: 'user' }],
  },
  envelopes,
};

describe('ReplayProvider', () => {
  describe('when a session plays the cassette turn by turn', () => {
    it('should emit each turn verbatim and rebuild its outcome, deltas and ids from the recording', async () => {
      const p = new ReplayProvider(cassette, { logger: new MemoryLogger() });
      const conn = await p.open({ spec: { name: 'a', tools: [] }, signal: new AbortController().signal });
      expect([p.id, p.mode, p.sessionId(conn), p.resumed(), p.turnCount]).toEqual(['bedrock-agentcore', 'request_response', 'host-1', false, 2]);

      const first = await lastValueFrom(p.pollTurn(conn, p.kickoffInput({ prompt: 'go' })).pipe(toArray()));
      expect(first).toEqual([
        { kind: 'delta', t: 'Work' },
        { kind: 'tool', id: 'tu_1' },
      ]);
      expect(first.map((e) => p.eventId(e))).toEqual(['e1', undefined]);
      expect(first.map((e) => p.textDelta(conn, e))).toEqual([{ text: 'Work', messageId: 'm1' }, undefined]);
      expect(p.normalize(first)).toMatchObject({
        terminal: 'requires_action',
        stopReason: 'tool_use',
        text: 'Work',
        customToolUses: [use],
        requestedToolUseIds: ['tu_1'],
        usage: { inputTokens: 3, outputTokens: 1 },
      });
      expect(p.transcript(conn)).toBeUndefined();

      const second = await lastValueFrom(p.pollTurn(conn, p.resumeInput([use], [{ toolUseId: 'tu_1', content: 'HI', isError: false }])).pipe(toArray()));
      expect(p.normalize(second)).toMatchObject({ terminal: 'end_turn', text: 'Done' });
      expect(p.normalize([])).toMatchObject({ terminal: 'end_turn' });
      expect(p.transcript(conn)).toEqual([{ role: 'user' }]);
      expect(p.mismatches).toEqual([]);
    });
  });

  describe('.resumeInput', () => {
    describe('when a result has no recorded counterpart, and with strict', () => {
      it('should report it with recorded undefined and fail the next poll naming both values', async () => {
        const logger = new MemoryLogger();
        const p = new ReplayProvider(cassette, { strict: true, logger });
        const conn = await p.open({ spec: { name: 'a', tools: [] }, signal: new AbortController().signal });
        const other = { id: 'tu_9', name: 'echo', input: {} };
        const input = p.resumeInput([other], [{ toolUseId: 'tu_9', content: 'x', isError: true }]);
        expect(p.mismatches).toEqual([{ toolUseId: 'tu_9', name: 'echo', recorded: undefined, actual: { toolUseId: 'tu_9', content: 'x', isError: true } }]);
        expect(logger.lines[0]!.message).toBe(`replay mismatch: tool 'echo' (tu_9) returned "x" (error) but the cassette recorded nothing`);
        await expect(lastValueFrom(p.pollTurn(conn, input))).rejects.toMatchObject({
          code: 'provider_error',
          details: { toolUseId: 'tu_9', recorded: undefined },
        });
      });
    });
  });

  describe('.fromJson', () => {
    describe('when the text is not a cassette', () => {
      it('should fail with store_error', () => {
        expect(() => ReplayProvider.fromJson('{}')).toThrow(/is not an agentrx cassette/);
      });
    });
  });
});
