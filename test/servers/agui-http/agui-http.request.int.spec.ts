import { request as httpRequest } from 'node:http';
import { postJson, runInput, startStack, type Stack } from './agui-http.fixtures.js';

/** A raw request without Content-Length (chunked), for the streaming body limit. */
function postChunked(url: string, chunks: string[]): Promise<{ status: number; body: string; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describe('readRunRequest (POST /agent over HTTP)', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('POST /agent with an invalid body', () => {
    beforeEach(async () => {
      stack = await startStack({ script: [{ text: 'never' }] });
    });

    it('should answer 400 listing every problem of the RunAgentInput', async () => {
      const r = await postJson(stack!.endpoint, {
        threadId: 7,
        messages: [
          { id: 'u1', role: 'robot', content: 'x' },
          { role: 'user', content: 3 },
        ],
        tools: {},
        forwardedProps: [],
      });
      expect(r.status).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.json).toMatchObject({ error: 'invalid_request', message: 'invalid RunAgentInput' });
      expect(r.json.problems).toEqual([
        'threadId: must be a string; got number',
        'runId: required, a non-empty string',
        'messages[0].role: must be one of developer, system, assistant, user, tool, activity, reasoning; got "robot"',
        'messages[1].id: required, a string',
        'messages[1].content: must be a string or an array of content parts; got number',
        'tools: must be an array; got an object',
        'forwardedProps: must be an object; got an array',
      ]);
      expect(stack!.emulator.requests).toHaveLength(0);
      expect(stack!.sessions).toHaveLength(0);
    });

    it('should answer 400 for a body without messages, without a user message, or with an empty last user message', async () => {
      expect((await postJson(stack!.endpoint, { threadId: 't', runId: 'r' })).json.problems).toEqual([
        'messages: required, an array of messages with at least one user message',
      ]);
      expect((await postJson(stack!.endpoint, runInput({ messages: [{ id: 'a', role: 'assistant', content: 'hi' }] }))).json.problems).toEqual([
        'messages: no user message; the last user message is the prompt',
      ]);
      const empty = await postJson(
        stack!.endpoint,
        runInput({
          messages: [
            { id: 'u1', role: 'user', content: 'earlier' },
            { id: 'u2', role: 'user', content: '  ' },
          ],
        }),
      );
      expect(empty.status).toBe(400);
      expect(empty.json.problems).toEqual(['messages[1].content: the last user message has no text']);
    });

    it('should answer 400 for invalid JSON, an empty body and a JSON value that is not an object', async () => {
      const bad = await postJson(stack!.endpoint, '{"threadId": ');
      expect(bad.status).toBe(400);
      expect(bad.json.problems).toEqual([expect.stringMatching(/^body: invalid JSON \(/)]);
      expect((await postJson(stack!.endpoint, '')).json.problems).toEqual(['body: empty; send a RunAgentInput JSON object']);
      expect((await postJson(stack!.endpoint, '[1,2]')).json.problems).toEqual(['body: must be a JSON object (RunAgentInput); got an array']);
    });

    it('should answer 415 for a body that is not declared as JSON', async () => {
      const r = await postJson(stack!.endpoint, JSON.stringify(runInput()), { 'content-type': 'text/plain' });
      expect(r.status).toBe(415);
      expect(r.json.error).toBe('unsupported_media_type');
    });
  });

  describe('POST /agent with a body over maxBodyBytes', () => {
    it('should answer 413 whether the size is declared or only streamed, and start nothing', async () => {
      stack = await startStack({ script: [{ text: 'never' }], handler: { maxBodyBytes: 1024 } });
      const big = runInput({}, 'x'.repeat(2000));
      const declared = await postJson(stack.endpoint, big);
      expect(declared.status).toBe(413);
      expect(declared.json).toMatchObject({ error: 'payload_too_large', problems: ['body: larger than 1024 bytes'] });
      const streamed = await postChunked(stack.endpoint, [JSON.stringify(big).slice(0, 900), JSON.stringify(big).slice(900)]);
      expect(streamed.status).toBe(413);
      expect(streamed.connection).toBe('close');
      expect(stack.sessions).toHaveLength(0);
    });
  });
});
