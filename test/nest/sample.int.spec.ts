import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DEMO_PROMPT } from '../../src/cli/cli.js';
import { AppModule, SAMPLE_ENV, sampleConfig } from '../../src/nest/sample/app.module.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../src/testing/openai-emulator.js';

describe('Nest sample host (AppModule)', () => {
  let emulator: OpenAiEmulator;
  let app: INestApplication;
  let url: string;
  beforeEach(async () => {
    emulator = await startOpenAiEmulator({ model: 'demo' });
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(SAMPLE_ENV)
      .useValue({ AGENTRX_BASE_URL: emulator.baseUrl, AGENTRX_MODEL: 'agentrx-demo' })
      .compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterEach(async () => {
    await app.close();
    await emulator.close();
  });

  describe('POST /ask', () => {
    describe('when given the demo prompt', () => {
      it('should answer with the run text, turns and usage', async () => {
        const res = await fetch(`${url}/ask`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ prompt: DEMO_PROMPT }),
        });
        expect(res.status).toBe(200);
        const body = (await res.json()) as { text: string; turns: number; usage: { inputTokens: number } };
        expect(body.turns).toBe(2);
        expect(body.text).toContain('126');
        expect(body.usage.inputTokens).toBeGreaterThan(0);
        const model = (emulator.requests[0]!.body as { model: string }).model;
        expect(model).toBe('agentrx-demo');
      });
    });

    describe('when the prompt is missing', () => {
      it('should answer 400', async () => {
        const res = await fetch(`${url}/ask`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        expect(res.status).toBe(400);
      });
    });
  });

  describe('POST /agent', () => {
    describe('when given a RunAgentInput', () => {
      it('should stream the run as AG-UI SSE', async () => {
        const input = {
          threadId: 'th',
          runId: 'r1',
          state: {},
          messages: [{ id: 'u1', role: 'user', content: 'what time is it?' }],
          tools: [],
          context: [],
          forwardedProps: {},
        };
        const res = await fetch(`${url}/agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify(input),
        });
        const types = (await res.text())
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => (JSON.parse(l.slice(5)) as { type: string }).type);
        expect(types[0]).toBe('RUN_STARTED');
        expect(types).toContain('TOOL_CALL_RESULT');
        expect(types.at(-1)).toBe('RUN_FINISHED');
      });
    });
  });
});

describe('sampleConfig', () => {
  describe('when AGENTRX_CONFIG is set', () => {
    it('should return the file path', () => {
      expect(sampleConfig({ AGENTRX_CONFIG: 'agentrx.json', AGENTRX_BASE_URL: 'http://x' })).toBe('agentrx.json');
    });
  });
  describe('when nothing is set', () => {
    it('should use the local provider on Ollama defaults', () => {
      expect(sampleConfig({})).toEqual({ provider: 'local', providers: { local: { baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.1' } } });
    });
  });
});
