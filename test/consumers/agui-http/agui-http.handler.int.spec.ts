import { request as httpRequest } from 'node:http';
import { injectable } from '../../../src/core/di/inversify.js';
import type { ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import { AddToolHandler, EchoToolHandler, NoInput, resetFakeTools } from '../../fakes/fake-tools.js';
import { AgentRx } from '../../../src/agentrx.js';
import { startAgUiServer } from '../../../src/consumers/agui-http/agui-http.server.js';
import type { ConfirmTool } from '../../../src/core/session/session-options.js';
import { cmaProviderModule } from '../../../src/plugins/providers/claude-managed-agents/cma.module.js';
import { startCmaEmulator } from '../../../src/testing/cma-emulator.js';
import { postJson, runInput, sseEvents, startStack, type Stack } from './agui-http.fixtures.js';

/** Starts a streaming POST and reads it until `until` matches an event; returns the reader and abort. */
async function openStream(url: string, body: unknown, until: (ev: { type: string }) => boolean, headers: Record<string, string> = {}) {
  const ctrl = new AbortController();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers }, body: JSON.stringify(body), signal: ctrl.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const seen: { type: string; [k: string]: any }[] = [];
  const readUntil = async (pred: (ev: { type: string }) => boolean): Promise<void> => {
    while (!seen.some(pred)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before the awaited event; got ${seen.map((e) => e.type).join(', ')}`);
      text += decoder.decode(value, { stream: true });
      seen.splice(0, seen.length, ...sseEvents(text));
    }
  };
  await readUntil(until);
  const readToEnd = async (): Promise<{ type: string; [k: string]: any }[]> => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return sseEvents(text);
      text += decoder.decode(value, { stream: true });
    }
  };
  return { res, abort: () => ctrl.abort(), readToEnd, seen };
}

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

const isStarted = (e: { type: string }): boolean => e.type === 'RUN_STARTED';

/** A tool that returns only once the test opens the gate. */
@injectable()
class GateToolHandler implements ToolHandler<NoInput> {
  static open: () => void = () => undefined;
  static running = false;
  readonly name = 'gate';
  readonly description = 'Waits for the test.';
  readonly inputType = NoInput;
  handle(): Promise<string> {
    GateToolHandler.running = true;
    return new Promise<string>((resolve) => (GateToolHandler.open = () => resolve('opened')));
  }
}

describe('AG-UI endpoint over HTTP', () => {
  let stack: Stack | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('POST /agent while a tool runs longer than heartbeatMs', () => {
    it('should keep the SSE stream alive with comment lines, and the events still parse', async () => {
      stack = await startStack({ script: [{ toolCalls: [{ id: 'c1', name: 'gate', arguments: {} }] }, { text: 'done' }], tools: [GateToolHandler], handler: { heartbeatMs: 20 } });
      const res = await fetch(stack.endpoint, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(runInput({ threadId: 't-hb' }, 'go')) });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      const read = async (): Promise<boolean> => {
        const { value, done } = await reader.read();
        text += decoder.decode(value, { stream: true });
        return !done;
      };
      // A keep-alive written while the tool waits (one may also come earlier, during the model call).
      const waiting = (): boolean => GateToolHandler.running && text.lastIndexOf(': keep-alive\n\n') > text.indexOf('TOOL_CALL_END');
      while (!waiting()) if (!(await read())) throw new Error('the stream ended without a keep-alive');
      GateToolHandler.open();
      while (await read());

      const types = sseEvents(text).map((e) => e.type);
      expect(types[0]).toBe('RUN_STARTED');
      expect(types.at(-1)).toBe('RUN_FINISHED');
      expect(types).toContain('TOOL_CALL_RESULT');
      expect(sseEvents(text).filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e.delta).join('')).toBe('done');
    });
  });

  describe('POST /agent when the host asks to confirm a tool of its own', () => {
    /** One run against a CMA emulator whose agent asks to confirm web_search; returns the AG-UI events. */
    async function runAsking(confirmTool?: ConfirmTool): Promise<{ type: string; [k: string]: any }[]> {
      const emu = await startCmaEmulator({ apiKey: 'sk-ant-agui-test-key', script: [{ serverToolUses: [{ id: 'sevt_ws', name: 'web_search', ask: true }] }, { text: 'Done.' }] });
      const rx = await AgentRx.create({
        modules: [cmaProviderModule],
        config: { provider: 'claude-managed-agents', consumers: { terminal: false }, providers: { 'claude-managed-agents': { apiKey: 'sk-ant-agui-test-key', baseUrl: emu.baseUrl } } },
      });
      const server = await startAgUiServer({ rx, port: 0, ...(confirmTool ? { confirmTool } : {}) });
      try {
        return sseEvents((await postJson(`${server.url}agent`, runInput({ threadId: 't-confirm' }, 'search'))).text);
      } finally {
        await server.close();
        await rx.stop();
        await emu.close();
      }
    }

    it('should end the run with a RUN_ERROR naming the tool and what to configure, without confirmTool', async () => {
      const events = await runAsking();
      expect(events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'unresolved_requires_action', message: expect.stringMatching(/'web_search' \(sevt_ws\).*--confirm/) });
      expect(events.filter((e) => e.type === 'RUN_ERROR' || e.type === 'RUN_FINISHED')).toHaveLength(1);
    });

    it('should answer with the endpoint\'s confirmTool and finish', async () => {
      const events = await runAsking(() => true);
      expect(events.at(-1)!.type).toBe('RUN_FINISHED');
      expect(events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e.delta).join('')).toBe('Done.');
    });
  });

  describe('POST /agent with an invalid body', () => {
    beforeEach(async () => {
      stack = await startStack({ script: [{ text: 'never' }] });
    });

    it('should answer 400 listing every problem of the RunAgentInput', async () => {
      const r = await postJson(stack!.endpoint, { threadId: 7, messages: [{ id: 'u1', role: 'robot', content: 'x' }, { role: 'user', content: 3 }], tools: {}, forwardedProps: [] });
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
      expect((await postJson(stack!.endpoint, { threadId: 't', runId: 'r' })).json.problems).toEqual(['messages: required, an array of messages with at least one user message']);
      expect((await postJson(stack!.endpoint, runInput({ messages: [{ id: 'a', role: 'assistant', content: 'hi' }] }))).json.problems).toEqual(['messages: no user message; the last user message is the prompt']);
      const empty = await postJson(stack!.endpoint, runInput({ messages: [{ id: 'u1', role: 'user', content: 'earlier' }, { id: 'u2', role: 'user', content: '  ' }] }));
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

  describe('POST /agent with a bearer token configured', () => {
    const TOKEN = 'sk-agui-test-token-0123456789';
    beforeEach(async () => {
      stack = await startStack({ script: [{ text: 'Authorized.' }], handler: { token: TOKEN } });
    });

    it('should answer 401 without a token, with a wrong one of the same or another length, or another scheme', async () => {
      const cases: Record<string, string>[] = [{}, { authorization: `Bearer ${TOKEN.replace(/.$/, 'X')}` }, { authorization: 'Bearer short' }, { authorization: `Basic ${TOKEN}` }, { authorization: `Bearer ${TOKEN} extra` }];
      for (const headers of cases) {
        const r = await postJson(stack!.endpoint, runInput(), headers);
        expect(r.status).toBe(401);
        expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="agentrx"/);
        expect(r.json.error).toBe('unauthorized');
        expect(r.text).not.toContain(TOKEN);
      }
      expect(stack!.sessions).toHaveLength(0);
      expect(stack!.emulator.requests).toHaveLength(0);
    });

    it('should stream the run with the right token, and keep the page and /healthz public', async () => {
      const r = await postJson(stack!.endpoint, runInput(), { authorization: `Bearer ${TOKEN}` });
      expect(r.status).toBe(200);
      expect(sseEvents(r.text).map((e) => e.type).at(-1)).toBe('RUN_FINISHED');
      expect((await fetch(stack!.server.url)).status).toBe(200);
      expect((await fetch(`${stack!.server.url}healthz`)).status).toBe(200);
    });
  });

  describe('POST /agent beyond maxConcurrentRuns', () => {
    it('should answer 429 with Retry-After while the limit is reached, and accept again once a run ended', async () => {
      stack = await startStack({ script: [{ text: 'Now there is room.' }], faults: { 0: { kind: 'hang' } }, handler: { maxConcurrentRuns: 1, retryAfterSeconds: 3 } });
      const first = await openStream(stack.endpoint, runInput({ threadId: 'a', runId: 'a1' }), isStarted);
      await stack.emulator.waitForRequest(0);
      expect(stack.server.handler.activeRuns).toBe(1);

      const refused = await postJson(stack.endpoint, runInput({ threadId: 'b', runId: 'b1' }));
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('3');
      expect(refused.json).toMatchObject({ error: 'too_many_runs', retryAfterSeconds: 3 });
      expect(stack.sessions).toHaveLength(1);

      first.abort();
      await stack.sessions[0]!.session.closed;
      const accepted = await postJson(stack.endpoint, runInput({ threadId: 'b', runId: 'b2' }));
      expect(accepted.status).toBe(200);
      expect(sseEvents(accepted.text).map((e) => e.type).at(-1)).toBe('RUN_FINISHED');
    });
  });

  describe('POST /agent on a thread whose run is still streaming', () => {
    it('should answer 409 and leave the running run alone', async () => {
      stack = await startStack({ script: [{ text: 'Finally.' }], faults: { 0: { kind: 'stall', afterChunks: 2 } } });
      const first = await openStream(stack.endpoint, runInput({ runId: 'r1' }), isStarted);
      const busy = await postJson(stack.endpoint, runInput({ runId: 'r2' }));
      expect(busy.status).toBe(409);
      expect(busy.json.error).toBe('thread_busy');
      expect(stack.server.handler.activeRuns).toBe(1);
      first.abort();
    });
  });

  describe('when the client disconnects mid-run', () => {
    it('should abort the provider request and cancel the session', async () => {
      stack = await startStack({ faults: { 0: { kind: 'hang' } } });
      const stream = await openStream(stack.endpoint, runInput({ threadId: 'gone' }), isStarted);
      await stack.emulator.waitForRequest(0);
      expect(stack.server.handler.activeRuns).toBe(1);

      stream.abort();

      const upstream = await stack.emulator.waitForClose(0);
      expect(upstream.clientAborted).toBe(true);
      const log = stack.sessions[0]!;
      await log.session.closed;
      expect(log.errors.map((e) => e.code)).toEqual(['cancelled']);
      expect(stack.server.handler.activeRuns).toBe(0);
      expect(stack.server.handler.threadCount).toBe(0);
    });

    it('should cancel a run whose tools already ran (mid model call), and start a new session for the thread next time', async () => {
      stack = await startStack({
        script: [{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'x' } }] }, { text: 'fresh start' }],
        faults: { 1: { kind: 'hang' } },
        tools: [EchoToolHandler, AddToolHandler],
      });
      const stream = await openStream(stack.endpoint, runInput({ threadId: 'tools-gone' }), (e) => e.type === 'TOOL_CALL_RESULT');
      await stack.emulator.waitForRequest(1);
      stream.abort();
      expect((await stack.emulator.waitForClose(1)).clientAborted).toBe(true);
      await stack.sessions[0]!.session.closed;

      const next = await postJson(stack.endpoint, runInput({ threadId: 'tools-gone', runId: 'r2' }));
      expect(sseEvents(next.text).map((e) => e.type).at(-1)).toBe('RUN_FINISHED');
      expect(stack.sessions).toHaveLength(2);
    });
  });

  describe('content negotiation', () => {
    it('should answer SSE to a wildcard or missing Accept header, and protobuf only when it is named', async () => {
      stack = await startStack({ script: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] });
      const wildcard = await postJson(stack.endpoint, runInput({ threadId: 'n1' }), { accept: '*/*' });
      expect(wildcard.headers.get('content-type')).toBe('text/event-stream');
      expect(sseEvents(wildcard.text).map((e) => e.type).at(-1)).toBe('RUN_FINISHED');
      const none = await fetch(stack.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(runInput({ threadId: 'n2' })) });
      expect(none.headers.get('content-type')).toBe('text/event-stream');
      await none.text();
      const proto = await fetch(stack.endpoint, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/vnd.ag-ui.event+proto' }, body: JSON.stringify(runInput({ threadId: 'n3' })) });
      expect(proto.headers.get('content-type')).toBe('application/vnd.ag-ui.event+proto');
      // Length-prefixed frames: 4-byte big-endian lengths that add up to the whole body.
      const bytes = new Uint8Array(await proto.arrayBuffer());
      let offset = 0;
      let frames = 0;
      while (offset < bytes.length) {
        offset += 4 + new DataView(bytes.buffer, bytes.byteOffset + offset, 4).getUint32(0);
        frames++;
      }
      expect(offset).toBe(bytes.length);
      expect(frames).toBeGreaterThan(4);
    });
  });

  describe('CORS', () => {
    beforeEach(async () => {
      stack = await startStack({ script: [{ text: 'Cross-origin hello.' }, { text: 'Same-origin hello.' }], handler: { cors: ['https://app.example'] } });
    });

    it('should answer the preflight of a listed origin, and refuse another origin', async () => {
      const ok = await fetch(stack!.endpoint, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
      expect(ok.status).toBe(204);
      expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(ok.headers.get('access-control-allow-methods')).toContain('POST');
      expect(ok.headers.get('access-control-allow-headers')).toBe('authorization, content-type, accept');
      expect(ok.headers.get('vary')).toBe('Origin');

      const evil = await fetch(stack!.endpoint, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(evil.status).toBe(403);
      expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('should stream to a listed origin with Access-Control-Allow-Origin, refuse another with 403, and allow same-origin', async () => {
      const ok = await postJson(stack!.endpoint, runInput({ threadId: 'c1' }), { origin: 'https://app.example' });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');

      const evil = await postJson(stack!.endpoint, runInput({ threadId: 'c2' }), { origin: 'https://evil.example' });
      expect(evil.status).toBe(403);
      expect(evil.headers.get('access-control-allow-origin')).toBeNull();
      expect(evil.json.error).toBe('origin_not_allowed');

      const self = await postJson(stack!.endpoint, runInput({ threadId: 'c3' }), { origin: new URL(stack!.server.url).origin });
      expect(self.status).toBe(200);
      expect(self.headers.get('access-control-allow-origin')).toBeNull();
      expect(stack!.sessions.map((s) => s.threadId)).toEqual(['c1', 'c3']);
    });
  });

  describe('GET routes', () => {
    it('should serve the page with a strict CSP, /healthz, 404 for unknown paths and 405 for wrong methods', async () => {
      stack = await startStack();
      const page = await fetch(stack.server.url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'; style-src 'sha256-/);
      const html = await page.text();
      expect(html).toContain('<script>');
      expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href="(?!data:)|https?:\/\//);

      const health = await fetch(`${stack.server.url}healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });

      expect((await fetch(`${stack.server.url}nope`)).status).toBe(404);
      const wrong = await fetch(stack.endpoint);
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get('allow')).toBe('POST, OPTIONS');
    });

    it('should not serve the page when page is false', async () => {
      stack = await startStack({ handler: { page: false } });
      expect((await fetch(stack.server.url)).status).toBe(404);
    });
  });

  describe('.close', () => {
    it('should end an open stream with one RUN_ERROR cancelled and refuse new runs', async () => {
      stack = await startStack({ faults: { 0: { kind: 'hang' } } });
      const stream = await openStream(stack.endpoint, runInput(), isStarted);
      await stack.emulator.waitForRequest(0);
      const closing = stack.server.handler.close();
      const events = await stream.readToEnd();
      await closing;
      expect(events.map((e) => e.type)).toEqual(['RUN_STARTED', 'RUN_ERROR']);
      expect(events[1]).toMatchObject({ code: 'cancelled' });
      const refused = await postJson(stack.endpoint, runInput({ threadId: 'later' }));
      expect(refused.status).toBe(503);
    });
  });
});
