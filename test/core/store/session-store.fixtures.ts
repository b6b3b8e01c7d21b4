import type { SessionEvent } from '../../../src/core/events/session-event.js';
import { SESSION_LOG_VERSION, type SessionRecord } from '../../../src/core/store/session-store.js';

/** Records and envelopes for store tests. */
export class SessionStoreFixtures {
  /** An idle record with an empty ledger; `over` replaces fields. */
  static record(sessionId: string, over: Partial<SessionRecord> = {}): SessionRecord {
    return {
      version: SESSION_LOG_VERSION,
      sessionId,
      provider: 'scripted',
      threadId: `thread-${sessionId}`,
      status: 'idle',
      createdAt: 1_000,
      updatedAt: 1_000,
      ledger: [],
      ...over,
    };
  }

  /** A diagnostic envelope with the given seq. */
  static envelope(sessionId: string, seq: number): SessionEvent {
    return { source: 'agentrx', seq, sessionId, turn: 1, provider: 'scripted', at: 1_000 + seq, raw: { type: 'agentrx.diagnostic', message: `event ${seq}` } };
  }

  /** Envelopes `from`..`to`, both included. */
  static envelopes(sessionId: string, from: number, to: number): SessionEvent[] {
    const out: SessionEvent[] = [];
    for (let seq = from; seq <= to; seq++) out.push(SessionStoreFixtures.envelope(sessionId, seq));
    return out;
  }
}
