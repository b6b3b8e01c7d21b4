import type { SessionEvent } from '../../../src/core/events/session-event.js';
import type { RawEvent } from '../../../src/core/model.js';
import type { AgentProvider } from '../../../src/core/plugin/agent-provider.js';
import { Ingestion } from '../../../src/core/session/ingestion.js';

/** A request/response provider whose raw events say what they carry; only the hooks in `hooks` exist. */
function provider(hooks: Partial<Pick<AgentProvider, 'textDelta' | 'reasoningDelta' | 'toolCallDelta' | 'hostToolResult'>>): AgentProvider {
  return { id: 'test', mode: 'request_response', ...hooks } as unknown as AgentProvider;
}

const textDelta = (_conn: unknown, e: RawEvent) => (typeof e['text'] === 'string' ? { text: e['text'], messageId: 'm-1' } : undefined);
const reasoningDelta = (_conn: unknown, e: RawEvent) => (typeof e['thinking'] === 'string' ? { text: e['thinking'], messageId: 'm-1.reasoning' } : undefined);
const toolCallDelta = (conn: unknown, e: RawEvent) =>
  typeof e['args'] === 'string' ? [{ toolUseId: `${String(conn)}-1`, name: 'echo', argsDelta: e['args'] }, { toolUseId: `${String(conn)}-2`, argsDelta: '' }] : undefined;
const hostToolResult = (_conn: unknown, e: RawEvent) => (typeof e['result'] === 'string' ? { toolUseId: 'srv-1', content: e['result'], isError: false } : undefined);

function record(p: AgentProvider, conn = 'conn'): { ingestion: Ingestion; envs: SessionEvent[] } {
  const ingestion = Ingestion.forProvider(p, () => conn, { dedupeWindow: 10, retainEvents: false });
  const envs: SessionEvent[] = [];
  ingestion.events$.subscribe((e) => envs.push(e));
  return { ingestion, envs };
}

const kinds = (envs: readonly SessionEvent[]): string[] => envs.map((e) => (e.source === 'provider' ? 'provider' : e.raw.type));

describe('Ingestion', () => {
  describe('.ingest', () => {
    describe('when one provider event carries reasoning, text, tool-call fragments and a host result', () => {
      const { ingestion, envs } = record(provider({ textDelta, reasoningDelta, toolCallDelta, hostToolResult }));
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

      it('should read the fragments with the session\'s conn and keep their fields', () => {
        expect(envs[4]!.raw).toEqual({ type: 'agentrx.tool_call_delta', toolUseId: 'conn-1', name: 'echo', argsDelta: '{"a":1}' });
        expect(envs[5]!.raw).toEqual({ type: 'agentrx.tool_call_delta', toolUseId: 'conn-2', argsDelta: '' });
        expect(envs[2]!.raw).toEqual({ type: 'agentrx.reasoning_delta', text: 'hmm', messageId: 'm-1.reasoning' });
      });

      it('should keep only the provider events as history', () => {
        expect(ingestion.history).toHaveLength(2);
      });
    });

    describe('when the provider has neither reasoningDelta nor toolCallDelta', () => {
      it('should synthesize only text deltas from the same events', () => {
        const { ingestion, envs } = record(provider({ textDelta }));
        ingestion.ingest({ thinking: 'hmm', text: 'Hi', args: '{}' });
        expect(kinds(envs)).toEqual(['provider', 'agentrx.text_delta']);
      });
    });

    describe('when the new hooks throw', () => {
      it('should count it as nothing carried and keep ingesting', () => {
        const boom = (): never => {
          throw new Error('boom');
        };
        const { ingestion, envs } = record(provider({ textDelta, reasoningDelta: boom, toolCallDelta: boom }));
        expect([ingestion.ingest({ text: 'a' }), ingestion.ingest({ text: 'b' })]).toEqual([true, true]);
        expect(kinds(envs)).toEqual(['provider', 'agentrx.text_delta', 'provider', 'agentrx.text_delta']);
      });
    });
  });
});
