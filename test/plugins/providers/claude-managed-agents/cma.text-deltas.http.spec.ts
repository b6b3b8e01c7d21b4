import { plainToInstance } from 'class-transformer';
import { HttpClientFactoryImpl } from '../../../../src/core/http/http-client-factory.js';
import { MemoryLogger } from '../../../../src/core/logger.js';
import type { AgentSpec, RawEvent } from '../../../../src/core/model.js';
import { MAX_TRACKED_PREVIEWS } from '../../../../src/plugins/providers/claude-managed-agents/cma-normalize.js';
import { CmaProviderOptionsClass } from '../../../../src/plugins/providers/claude-managed-agents/cma.config.js';
import { CmaAgentProvider, type CmaConn } from '../../../../src/plugins/providers/claude-managed-agents/cma.provider.js';
import { startCmaEmulator, type CmaEmulator } from '../../../../src/testing/cma-emulator.js';
import { API_KEY } from './cma-fixtures.js';
import { hostText } from '../host-text.js';

/**
 * Text deltas of many Claude Managed Agents sessions streaming `event_deltas` previews at once.
 * The conns are real (opened against the emulator over loopback HTTP); the preview events are fed
 * to `textDelta(conn, event)` in the shapes the service streams them (`event_start`, then
 * `event_delta` fragments, then the buffered `agent.message` that concludes the preview).
 */

const spec: AgentSpec = { name: 'previewer', tools: [] };
const signal = (): AbortSignal => new AbortController().signal;

/** More sessions than the 512 unfinished previews one shared tracker used to hold for all of them. */
const SESSIONS = 600;

const eventStart = (id: string): RawEvent => ({ type: 'event_start', event: { type: 'agent.message', id } });
const eventDelta = (id: string, text: string): RawEvent => ({
  type: 'event_delta',
  event_id: id,
  delta: { type: 'content_delta', index: 0, content: { type: 'text', text } },
});
const agentMessage = (id: string, text: string): RawEvent => ({
  type: 'agent.message',
  id,
  processed_at: '2026-04-01T00:00:01.000Z',
  content: [{ type: 'text', text }],
});

/** The fragments the service would stream for `text`: word by word, spaces kept. */
const fragments = (text: string): string[] => text.match(/\s*\S+\s*/g) ?? [];

describe('CmaAgentProvider.decode (text)', () => {
  let emu: CmaEmulator;
  let provider: CmaAgentProvider;
  let conns: CmaConn[];

  beforeAll(async () => {
    emu = await startCmaEmulator({ apiKey: API_KEY });
    const options = plainToInstance(
      CmaProviderOptionsClass,
      { apiKey: API_KEY, baseUrl: emu.baseUrl, retryBaseMs: 1, eventDeltas: true },
      { exposeDefaultValues: true },
    );
    provider = new CmaAgentProvider(options, new HttpClientFactoryImpl(), new MemoryLogger());
    const handle = await provider.provision(spec, signal());
    // Opened 50 at a time: 600 connections at once overflow the emulator's listen backlog (511) on a loaded machine.
    conns = [];
    for (let i = 0; i < SESSIONS; i += 50)
      conns.push(...(await Promise.all(Array.from({ length: 50 }, () => provider.open({ spec, handle, signal: signal() })))));
  });
  afterAll(async () => {
    for (const conn of conns ?? []) provider.close(conn);
    await emu.close();
  });

  describe('when more sessions than one tracker could hold each have a preview in flight, interleaved', () => {
    let joined: string[];
    let messageIds: Set<string>[];
    let texts: string[];
    let ids: string[];

    beforeAll(() => {
      expect(new Set(conns.map((c) => c.sessionId)).size).toBe(SESSIONS);
      texts = conns.map((c, i) => `Session ${i} (${c.sessionId}) reports ${i * 7} widgets, all accounted for.`);
      ids = conns.map((_c, i) => `sevt_msg_${String(i).padStart(6, '0')}`);
      joined = conns.map(() => '');
      messageIds = conns.map(() => new Set<string>());
      const feed = (i: number, event: RawEvent): void => {
        const d = hostText(provider.decode(conns[i]!, event));
        if (d === undefined) return;
        joined[i] += d.text;
        messageIds[i]!.add(String(d.messageId));
      };
      const pieces = texts.map(fragments);
      const rounds = Math.max(...pieces.map((p) => p.length));
      // Every session opens its preview before any of them gets its first fragment…
      conns.forEach((_c, i) => feed(i, eventStart(ids[i]!)));
      // …then the sessions take turns, one fragment each per round (forwards, then backwards)…
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? conns.map((_c, i) => i) : conns.map((_c, i) => SESSIONS - 1 - i);
        for (const i of order) if (pieces[i]![r] !== undefined) feed(i, eventDelta(ids[i]!, pieces[i]![r]!));
      }
      // …and the concluding messages arrive in yet another order (odd sessions, then even ones backwards).
      const all = [...conns.keys()];
      const concluding = [...all.filter((i) => i % 2 === 1), ...all.filter((i) => i % 2 === 0).reverse()];
      for (const i of concluding) feed(i, agentMessage(ids[i]!, texts[i]!));
    });

    it("should join each session's deltas to exactly its own text", () => {
      const wrong = joined.map((text, i) => ({ i, text })).filter(({ i, text }) => text !== texts[i]);
      expect(wrong).toEqual([]);
    });

    it("should report each session's deltas under its own message id only", () => {
      expect(messageIds.map((m) => [...m])).toEqual(ids.map((id) => [id]));
    });

    it('should leave no preview unfinished in any session', () => {
      expect(conns.map((c) => c.deltas.tracked).filter((n) => n !== 0)).toEqual([]);
    });
  });

  describe('when a session ends with previews still unfinished (a cancel mid-message)', () => {
    it('should release them with the conn, and keep a bound per session', async () => {
      const conn = await provider.open({ spec, signal: signal(), handle: await provider.provision(spec, signal()) });
      for (let i = 0; i < MAX_TRACKED_PREVIEWS + 5; i++) provider.decode(conn, eventDelta(`sevt_cut_${i}`, 'partial '));
      expect(conn.deltas.tracked).toBe(MAX_TRACKED_PREVIEWS);
      // Another session's previews are untouched by this one's.
      expect(hostText(provider.decode(conns[0]!, eventDelta('sevt_other', 'own ')))).toEqual({ text: 'own ', messageId: 'sevt_other' });
      expect(conns[0]!.deltas.tracked).toBe(1);
      provider.close(conn);
      expect(conn.deltas.tracked).toBe(0);
      expect(conns[0]!.deltas.tracked).toBe(1);
    });
  });
});
