import { AgentRxConfig } from '../../../src/core/config/agentrx.config.js';
import { Container } from '../../../src/core/util/inversify.js';
import { ProviderRegistration } from '../../../src/core/plugin/provider-registration.js';
import { defaultModules } from '../../../src/default-modules.js';
import { finishReason, genAiProviderName, outputMessages, sectionModel, toolSpan } from '../../../src/consumers/otel/otel.attributes.js';

describe('otel attribute mapping', () => {
  describe('genAiProviderName', () => {
    it("should map the built-in providers' ids to the GenAI well-known names their registrations give, and keep other ids", () => {
      const container = new Container();
      container.load(...defaultModules());
      const registrations = container.getAll<ProviderRegistration>(ProviderRegistration);
      const names = ['local', 'claude-managed-agents', 'bedrock-agentcore', 'my-host', undefined].map((id) => genAiProviderName(id, registrations));
      expect(names).toEqual(['openai', 'anthropic', 'aws.bedrock', 'my-host', '_OTHER']);
    });

    it('should take the telemetry name of a provider the host registers', () => {
      expect(genAiProviderName('my-host', [{ id: 'my-host', telemetryName: 'my.vendor' }])).toBe('my.vendor');
      expect(genAiProviderName('local')).toBe('local');
    });
  });

  describe('finishReason', () => {
    it('should take a non-empty string, or the string type of an object, else nothing', () => {
      expect([
        finishReason('stop'),
        finishReason({ type: 'requires_action', event_ids: [] }),
        finishReason(''),
        finishReason({ type: 1 }),
        finishReason(undefined),
      ]).toEqual(['stop', 'requires_action', undefined, undefined, undefined]);
    });
  });

  describe('sectionModel', () => {
    it('should read the model of the selected provider section only', () => {
      const config = Object.assign(new AgentRxConfig(), { provider: 'local', providers: { local: { model: 'qwen' }, other: { model: '' } } });
      expect([
        sectionModel(config, 'local'),
        sectionModel(config, 'other'),
        sectionModel(config, 'missing'),
        sectionModel(undefined, 'local'),
        sectionModel(config, undefined),
      ]).toEqual(['qwen', undefined, undefined, undefined, undefined]);
    });
  });

  describe('outputMessages', () => {
    it('should render text and tool calls as one assistant message, arguments parsed when they are JSON', () => {
      const calls = [
        { id: 'a', name: 'lookup', args: '{"q":"x"}' },
        { id: 'b', name: 'raw', args: 'not json' },
      ];
      expect(JSON.parse(outputMessages('Checking.', calls, 'tool_calls'))).toEqual([
        {
          role: 'assistant',
          parts: [
            { type: 'text', content: 'Checking.' },
            { type: 'tool_call', id: 'a', name: 'lookup', arguments: { q: 'x' } },
            { type: 'tool_call', id: 'b', name: 'raw', arguments: 'not json' },
          ],
          finish_reason: 'tool_calls',
        },
      ]);
    });
  });

  describe('toolSpan', () => {
    const call = { id: 'c1', name: 'lookup', args: '{"q":"secret"}' };

    it('should name the span after the tool and record content only with captureContent', () => {
      const without = toolSpan(call, { received: true, content: 'secret result', durationMs: 5, replayed: false }, 'thread-1', false);
      expect(without.name).toBe('execute_tool lookup');
      expect(without.attributes).toEqual({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'lookup',
        'gen_ai.tool.call.id': 'c1',
        'gen_ai.tool.type': 'function',
        'gen_ai.conversation.id': 'thread-1',
        'agentrx.tool.result_received': true,
        'agentrx.tool.duration_ms': 5,
        'agentrx.tool.replayed': false,
      });
      const withContent = toolSpan(call, { received: true, content: 'secret result' }, 'thread-1', true);
      expect(withContent.attributes).toMatchObject({ 'gen_ai.tool.call.arguments': '{"q":"secret"}', 'gen_ai.tool.call.result': 'secret result' });
    });

    it('should name a span without a tool name execute_tool', () => {
      expect(toolSpan({ id: 'c1', name: '', args: '' }, { received: false }, 't', false).name).toBe('execute_tool');
    });
  });
});
