import { MemoryLogger } from '../../../src/core/logger.js';
import { postJson, runInput, startStack, type Stack } from './agui-http.fixtures.js';

describe('AG-UI endpoint request log', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('when a run is streamed and another request is refused', () => {
    it('should log one line per request with method, path, status, ids, duration and outcome', async () => {
      const logger = new MemoryLogger();
      stack = await startStack({ script: [{ text: 'Hi.' }], handler: { logger } });
      await postJson(stack.endpoint, runInput({ threadId: 'logged', runId: 'run-7' }));
      await postJson(stack.endpoint, 'x', { 'content-type': 'text/plain' });
      // The line is written once the response has closed: wait for both.
      const deadline = Date.now() + 5_000;
      while (logger.lines.length < 2 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      expect(logger.lines.map((l) => [l.level, l.message])).toEqual([
        ['info', 'agui request'],
        ['info', 'agui request'],
      ]);
      expect(logger.lines[0]!.fields).toMatchObject({
        method: 'POST',
        path: '/agent',
        status: 200,
        threadId: 'logged',
        runId: 'run-7',
        outcome: 'completed',
        durationMs: expect.any(Number),
      });
      expect(logger.lines[1]!.fields).toMatchObject({ method: 'POST', path: '/agent', status: 415, outcome: 'refused' });
      expect(logger.lines[1]!.fields).not.toHaveProperty('threadId');
    });
  });
});
