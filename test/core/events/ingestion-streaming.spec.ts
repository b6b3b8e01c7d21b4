import type { SessionEvent } from '../../../src/core/events/session-event.js';
import type { RawEvent } from '../../../src/core/model.js';
import { defaultEventId, type AgentProvider } from '../../../src/core/plugin/agent-provider.js';
import type { HostEvent } from '../../../src/core/plugin/host-event.js';
import { Ingestion } from '../../../src/core/session/ingestion.js';

/** A request/response provider whose raw events say what they carry; `decode` reads them. */
function provider(decode: (conn: unknown, e: RawEvent) => readonly HostEvent[]): AgentProvider {
  return { id: 'test', mode: 'request_response', decode, eventId: defaultEventId } as Partial<AgentProvider> as AgentProvider;
}

/** Decodes text (`text`), reasoning (`thinking`), two calls' fragments (`args`) and a host result (`result`), scrambled: the ingestion orders them. */
const decodeAll = (conn: unknown, e: RawEvent): HostEvent[] => {
  const host: HostEvent[] = [];
  if (typeof e['args'] === 'string')
    host.push(
      { kind: 'tool_call_delta', toolUseId: `${String(conn)}-1`, name: 'echo', argsDelta: e['args'] },
      { kind: 'tool_call_delta', toolUseId: `${String(conn)}-2`, argsDelta: '' },
    );
  if (typeof e['text'] === 'string') host.push({ kind: 'text', text: e['text'], messageId: 'm-1' });
  if (typeof e['result'] === 'string') host.push({ kind: 'host_tool_result', toolUseId: 'srv-1', content: e['result'], isError: false });
  if (typeof e['thinking'] === 'string') host.push({ kind: 'reasoning', text: e['thinking'], messageId: 'm-1.reasoning' });
  return host;
};
const decodeText = (_conn: unknown, e: RawEvent): HostEvent[] => (typeof e['text'] === 'string' ? [{ kind: 'text', text: e['text'], messageId: 'm-1' }] : []);

function record(p: AgentProvider, conn = 'conn'): { ingestion: Ingestion; envs: SessionEvent[] } {
  const ingestion = Ingestion.forProvider(p, () => conn, { dedupeWindow: 10, retainEvents: false });
  const envs: SessionEvent[] = [];
  ingestion.events$.subscribe((e) => envs.push(e));
  return { ingestion, envs };
}

const kinds = (envs: readonly SessionEvent[]): string[] => envs.map((e) => (e.source === 'provider' ? 'provider' : e.raw.type));

describe('Ingestion', () => {
  describe('.ingest', () => {
    describe('when one provider event decodes to reasoning, text, tool-call fragments and a host result, in any order', () => {
      const { ingestion, envs } = record(provider(decodeAll));
      ingestion.ingest({ thinking: 'hmm', text: 'Hi', args: '{"a":1}', result: 'found' });
      ingestion.ingest({ args: '}' });

      it('should follow it with the host result, then the reasoning, the text and one fragment per call, in that order', () => {
        expect(kinds(envs)).toEqual([
          'provider',
          'agentrx.host_tool_result',
          'agentrx.reasoning_delta',
          'agentrx.text_delta',
          'agentrx.tool_call_delta',
          'agentrx.tool_call_delta',
          'provider',
          'agentrx.tool_call_delta',
          'agentrx.tool_call_delta',
        ]);
        expect(envs.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      });

      it("should read the fragments with the session's conn and keep their fields", () => {
        expect(envs[4]!.raw).toEqual({ type: 'agentrx.tool_call_delta', toolUseId: 'conn-1', name: 'echo', argsDelta: '{"a":1}' });
        expect(envs[5]!.raw).toEqual({ type: 'agentrx.tool_call_delta', toolUseId: 'conn-2', argsDelta: '' });
        expect(envs[2]!.raw).toEqual({ type: 'agentrx.reasoning_delta', text: 'hmm', messageId: 'm-1.reasoning' });
      });

      it('should keep only the provider events as history', () => {
        expect(ingestion.history).toHaveLength(2);
      });
    });

    describe('when the provider decodes only text', () => {
      it('should synthesize only text deltas from the same events', () => {
        const { ingestion, envs } = record(provider(decodeText));
        ingestion.ingest({ thinking: 'hmm', text: 'Hi', args: '{}' });
        expect(kinds(envs)).toEqual(['provider', 'agentrx.text_delta']);
      });
    });

    describe('when decode throws or answers something malformed', () => {
      it('should count it as nothing carried and keep ingesting', () => {
        const flaky = (conn: unknown, e: RawEvent): readonly HostEvent[] => {
          if (e['text'] === 'boom') throw new Error('boom');
          if (e['text'] === 'odd')
            return [{ kind: 'text', text: '' }, { kind: 'host_tool_result', toolUseId: '', content: 'x', isError: false }, null as unknown as HostEvent];
          return decodeText(conn, e);
        };
        const { ingestion, envs } = record(provider(flaky));
        expect([
          ingestion.ingest({ text: 'a' }),
          ingestion.ingest({ text: 'boom' }),
          ingestion.ingest({ text: 'odd' }),
          ingestion.ingest({ text: 'b' }),
        ]).toEqual([true, true, true, true]);
        expect(kinds(envs)).toEqual(['provider', 'agentrx.text_delta', 'provider', 'provider', 'provider', 'agentrx.text_delta']);
      });
    });
  });
});
