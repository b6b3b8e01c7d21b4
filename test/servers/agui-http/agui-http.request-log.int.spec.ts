import { MemoryLogger } from '../../../src/core/logger.js';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import { openStream, postJson, runInput, sseEvents, startStack, type Stack, type StackOptions } from './agui-http.fixtures.js';

/** A MemoryLogger that also resolves a promise once it holds `n` lines (the request line is written when the response closes). */
class AwaitedLogger extends MemoryLogger {
  private readonly waiting: { n: number; resolve: () => void }[] = [];

  override info(message: string, fields?: Record<string, unknown>): void {
    super.info(message, fields);
    for (const w of this.waiting.filter((x) => this.lines.length >= x.n)) w.resolve();
  }

  /** Resolves with the fields of the `n`th line (1-based) once it is written. */
  async line(n: number): Promise<Record<string, unknown> | undefined> {
    if (this.lines.length < n) await new Promise<void>((resolve) => this.waiting.push({ n, resolve }));
    return this.lines[n - 1]?.fields;
  }
}

const ASK_USER = { name: 'ask_user', description: 'Ask the user.', parameters: { type: 'object', properties: { question: { type: 'string' } } } };
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys.',
  requireApproval: true,
  inputSchema: { type: 'object', properties: {} },
  handle: () => 'deployed',
});

/** What the upstream answers: text the client must never read (a host, a port, the upstream's words). */
const UPSTREAM_BODY = { error: { message: 'messages[1] refused by gateway internal-gw.corp:8443 (trace 5f3a)', type: 'invalid_request_error' } };

describe('AG-UI endpoint request log and session failures', () => {
  let stack: Stack | undefined;
  let logger: AwaitedLogger;
  const start = async (opts: StackOptions): Promise<Stack> => {
    logger = new AwaitedLogger();
    stack = await startStack({ ...opts, handler: { ...opts.handler, logger } });
    return stack;
  };
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('when runs end finished, waiting on frontend tools, and with an interrupt', () => {
    it('should log completed, awaiting_tools and interrupt', async () => {
      const s = await start({
        tools: [deploy],
        script: [
          { text: 'Hi.' },
          { toolCalls: [{ id: 'call_ask', name: 'ask_user', arguments: { question: 'Ship?' } }] },
          { toolCalls: [{ id: 'call_dep', name: 'deploy', arguments: {} }] },
        ],
      });
      await postJson(s.endpoint, runInput({ threadId: 'done', runId: 'r1' }));
      expect(await logger.line(1)).toMatchObject({ status: 200, outcome: 'completed', threadId: 'done', runId: 'r1' });
      await postJson(s.endpoint, runInput({ threadId: 'asks', runId: 'r2', tools: [ASK_USER] }));
      expect(await logger.line(2)).toMatchObject({ status: 200, outcome: 'awaiting_tools', threadId: 'asks' });
      await postJson(s.endpoint, runInput({ threadId: 'approves', runId: 'r3' }));
      expect(await logger.line(3)).toMatchObject({ status: 200, outcome: 'interrupt', threadId: 'approves' });
      expect(logger.lines.map((l) => l.fields)).not.toContainEqual(expect.objectContaining({ error: expect.anything() }));
    });
  });

  describe('when the model server refuses the request (HTTP 400)', () => {
    it("should tell the client so with the error code, and log run_error with the code and the session's full text", async () => {
      const s = await start({ faults: { 0: { kind: 'status', status: 400, body: UPSTREAM_BODY } } });
      const port = new URL(s.emulator.baseUrl).port;

      const reply = await postJson(s.endpoint, runInput({ threadId: 'refused-upstream', runId: 'r1' }));

      const events = sseEvents(reply.text);
      expect(events.map((e) => e.type)).toEqual(['RUN_STARTED', 'RUN_ERROR']);
      expect(events[1]).toEqual({
        type: 'RUN_ERROR',
        message: 'the model server refused the request (HTTP 400)',
        code: 'http_error',
        timestamp: expect.any(Number),
      });
      for (const secret of ['127.0.0.1', `:${port}`, 'internal-gw', 'trace 5f3a', '/v1']) expect(reply.text).not.toContain(secret);
      const line = await logger.line(1);
      expect(line).toMatchObject({ status: 200, outcome: 'run_error', code: 'http_error', threadId: 'refused-upstream', runId: 'r1' });
      expect(line?.['error']).toEqual(expect.stringContaining('HTTP 400'));
      expect(line?.['error']).toEqual(expect.stringContaining('internal-gw.corp:8443'));
      expect(s.sessions[0]?.errors[0]?.message).toBe(line?.['error']);
    });
  });

  describe('when the model server fails (HTTP 502) or cannot be reached', () => {
    it('should say which, naming no address', async () => {
      const s = await start({ faults: { 0: { kind: 'status', status: 502 } } });
      const port = new URL(s.emulator.baseUrl).port;
      const failed = sseEvents((await postJson(s.endpoint, runInput({ threadId: 'upstream-502' }))).text).at(-1);
      expect(failed).toMatchObject({ type: 'RUN_ERROR', message: 'the model server failed (HTTP 502)', code: 'http_error' });
      expect(await logger.line(1)).toMatchObject({ outcome: 'run_error', code: 'http_error' });

      await s.emulator.close();
      const unreachable = await postJson(s.endpoint, runInput({ threadId: 'upstream-gone' }));
      expect(sseEvents(unreachable.text).at(-1)).toMatchObject({ type: 'RUN_ERROR', message: 'the model server could not be reached', code: 'http_error' });
      expect(unreachable.text).not.toContain(`:${port}`);
      expect(await logger.line(2)).toMatchObject({ outcome: 'run_error', code: 'http_error', error: expect.stringContaining(`127.0.0.1:${port}`) });
    });
  });

  describe('when the client leaves mid-run, and when a request is refused', () => {
    it('should log client_closed, then refused', async () => {
      const s = await start({ faults: { 0: { kind: 'hang' } } });
      const stream = await openStream(s.endpoint, runInput({ threadId: 'left', runId: 'r1' }), (e) => e.type === 'RUN_STARTED');
      stream.abort();
      expect(await logger.line(1)).toMatchObject({ outcome: 'client_closed', threadId: 'left', runId: 'r1' });

      await postJson(s.endpoint, runInput({ threadId: '' }));
      expect(await logger.line(2)).toMatchObject({ status: 400, outcome: 'refused' });
    });
  });
});
