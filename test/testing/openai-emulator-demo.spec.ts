import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { findExpression, findFileName } from '../../src/testing/demo-model.js';
import { DEMO_MODEL_LABEL, startOpenAiEmulator, type OpenAiEmulator } from '../../src/testing/index.js';

const demoTools: ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_time', description: 'Current time', parameters: { type: 'object', properties: {} } } },
  {
    type: 'function',
    function: { name: 'calculate', description: 'Arithmetic', parameters: { type: 'object', properties: { expression: { type: 'string' } } } },
  },
  { type: 'function', function: { name: 'read_file', description: 'Reads a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];

describe('startOpenAiEmulator({ model: "demo" })', () => {
  let emu: OpenAiEmulator;
  let client: OpenAI;

  beforeEach(async () => {
    emu = await startOpenAiEmulator({ model: 'demo' });
    client = new OpenAI({ baseURL: emu.baseUrl, apiKey: 'test', maxRetries: 0 });
  });

  afterEach(async () => {
    await emu.close();
  });

  describe('when the prompt mentions the time, an expression and a file', () => {
    it('should call the three demo tools in parallel, then stream a labelled answer quoting each result', async () => {
      const prompt = 'What time is it, what is (17 + 25) * 3, and what does README.md say?';
      const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: prompt }];
      const first = await client.chat.completions.create({ model: 'demo', messages, tools: demoTools });
      const calls = first.choices[0]!.message.tool_calls!.flatMap((c) => (c.type === 'function' ? [c] : []));
      expect(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
        ['get_time', {}],
        ['calculate', { expression: '(17 + 25) * 3' }],
        ['read_file', { path: 'README.md' }],
      ]);
      expect(first.choices[0]!.finish_reason).toBe('tool_calls');

      messages.push(first.choices[0]!.message as ChatCompletionMessageParam);
      const results = ['2026-01-01T12:00:00Z', '126', '# agentrx'];
      calls.forEach((c, i) => messages.push({ role: 'tool', tool_call_id: c.id, content: results[i]! }));
      const stream = await client.chat.completions.create({ model: 'demo', messages, tools: demoTools, stream: true });
      const deltas: string[] = [];
      for await (const chunk of stream) for (const ch of chunk.choices) if (ch.delta.content) deltas.push(ch.delta.content);
      const text = deltas.join('');
      expect(deltas.length).toBeGreaterThan(3);
      expect(text.startsWith(DEMO_MODEL_LABEL)).toBe(true);
      expect(text).toContain('- get_time returned: "2026-01-01T12:00:00Z"');
      expect(text).toContain('- calculate returned: "126"');
      expect(text).toContain('- read_file returned: "# agentrx"');
      expect(text).toMatch(/Summary: I used 3 tools \(get_time, calculate, read_file\)/);
    });
  });

  describe('when a tool result is an error', () => {
    it('should quote the failure', async () => {
      const messages: ChatCompletionMessageParam[] = [
        { role: 'user', content: 'what is 1 / 0' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'calculate', arguments: '{"expression":"1 / 0"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ error: 'division by zero', isError: true }) },
      ];
      const done = await client.chat.completions.create({ model: 'demo', messages, tools: demoTools });
      expect(done.choices[0]!.message.content).toContain('- calculate failed: "division by zero"');
    });
  });

  describe('when the prompt has no keyword', () => {
    it('should answer directly, saying it is a demo', async () => {
      const done = await client.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'hello' }], tools: demoTools });
      expect(done.choices[0]!.message.tool_calls).toBeUndefined();
      expect(done.choices[0]!.finish_reason).toBe('stop');
      expect(done.choices[0]!.message.content).toContain(DEMO_MODEL_LABEL);
      expect(done.choices[0]!.message.content).toContain('"hello"');
    });
  });

  describe('when the matching tool is not declared in the request', () => {
    it('should not call it', async () => {
      const onlyTime = demoTools.slice(0, 1);
      const done = await client.chat.completions.create({
        model: 'demo',
        messages: [{ role: 'user', content: 'what is 2 + 2 and the time' }],
        tools: onlyTime,
      });
      const names = (done.choices[0]!.message.tool_calls ?? []).map((c) => (c.type === 'function' ? c.function.name : c.type));
      expect(names).toEqual(['get_time']);
    });
  });

  describe('when the local provider sent its FINAL TURN directive', () => {
    it('should answer without tools', async () => {
      const done = await client.chat.completions.create({
        model: 'demo',
        messages: [
          { role: 'user', content: 'what time is it' },
          { role: 'user', content: 'FINAL TURN: you are about to reach the maximum number of turns.' },
        ],
        tools: demoTools,
      });
      expect(done.choices[0]!.message.tool_calls).toBeUndefined();
      expect(done.choices[0]!.message.content).toContain('"what time is it"');
    });
  });
});

describe('demo-model parsing', () => {
  describe('findExpression', () => {
    describe('when the prompt holds arithmetic', () => {
      it('should return the longest balanced expression', () => {
        expect(findExpression('what is (17 + 25) * 3?')).toBe('(17 + 25) * 3');
        expect(findExpression('compute 2+2 please')).toBe('2+2');
        expect(findExpression('(3 * 4) is it')).toBe('(3 * 4)');
        expect(findExpression('is (2 + 3 right')).toBe('2 + 3');
        expect(findExpression('room 101 at 5')).toBeUndefined();
      });
    });
  });

  describe('findFileName', () => {
    describe('when the prompt mentions files', () => {
      it('should return the first file-like token without punctuation', () => {
        expect(findFileName('show me README.md.')).toBe('README.md');
        expect(findFileName('open "src/index.ts", then')).toBe('src/index.ts');
        expect(findFileName('pi is 3.14, e.g. nothing')).toBeUndefined();
      });
    });
  });
});
