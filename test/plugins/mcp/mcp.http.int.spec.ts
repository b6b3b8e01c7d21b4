import { jest } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentRx } from '../../../src/agentrx.js';
import { mcpModule } from '../../../src/plugins/mcp/mcp.module.js';
import { McpToolSource } from '../../../src/plugins/mcp/mcp.source.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';
import { EVERYTHING, RecordingLogger, callTool, mcpOptions } from './mcp-helpers.js';

const LOOPBACK = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'loopback.mjs');

jest.setTimeout(30_000);

/** server-everything in its Streamable HTTP mode (argv `streamableHttp`, port from PORT), bound to 127.0.0.1. */
async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', LOOPBACK, EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /LISTENING (\d+)/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`server-everything exited (${code}): ${err}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

describe('McpToolSource over Streamable HTTP', () => {
  let source: McpToolSource | undefined;
  let child: ChildProcess | undefined;
  let server: Server | undefined;
  const logger = new RecordingLogger();

  let rx: AgentRx | undefined;
  let emulator: OpenAiEmulator | undefined;

  afterEach(async () => {
    await rx?.stop();
    await emulator?.close();
    rx = undefined;
    emulator = undefined;
    await source?.stop();
    source = undefined;
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    child = undefined;
    server?.closeAllConnections();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    server = undefined;
  });

  describe('when the endpoint answers 401', () => {
    it('should fail start-up naming the server and the status, never showing the header value', async () => {
      const seen: IncomingHttpHeaders[] = [];
      server = createServer((req, res) => {
        seen.push(req.headers);
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      });
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
      const s = new McpToolSource(logger, mcpOptions({ tracker: { url, headers: { Authorization: 'Bearer hunter2-secret' } } }), undefined);
      let err: Error | undefined;
      try {
        await s.start();
      } catch (e) {
        err = e as Error;
      }
      expect(err?.message).toMatch(/^MCP server tracker could not be started: .*401/);
      expect(err?.message).not.toContain('hunter2-secret');
      expect(logger.lines.join('\n')).not.toContain('hunter2-secret');
      expect(seen[0]?.authorization).toBe('Bearer hunter2-secret');
    });
  });

  describe('when the URL carries a user, a password and a token in its query', () => {
    it('should fail start-up without printing any of them', async () => {
      const s = new McpToolSource(logger, mcpOptions({ tracker: { url: 'http://alice:s3cret-pw@127.0.0.1:9/mcp?token=qtoken-123' } }), undefined);
      let err: Error | undefined;
      try {
        await s.start();
      } catch (e) {
        err = e as Error;
      }
      expect(err?.message).toMatch(/^MCP server tracker could not be started: /);
      for (const secret of ['s3cret-pw', 'alice', 'qtoken-123']) {
        expect(err?.message).not.toContain(secret);
        expect(logger.lines.join('\n')).not.toContain(secret);
      }
    });
  });

  describe('when server-everything runs in Streamable HTTP mode on a loopback port', () => {
    it('should list its tools and call them (text, image)', async () => {
      const http = await startEverythingHttp();
      child = http.child;
      source = new McpToolSource(logger, mcpOptions({ remote: { url: http.url } }), undefined);
      await source.start();
      const names = source.tools().map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['remote__echo', 'remote__get-sum', 'remote__get-tiny-image']));
      expect(source.pids).toEqual({ remote: undefined });
      expect(await callTool(source.tools(), 'remote__echo', { message: 'over http' })).toMatchObject({ content: 'Echo: over http', isError: false });
      expect(await callTool(source.tools(), 'remote__get-sum', { a: 1, b: 1 })).toMatchObject({ content: 'The sum of 1 and 1 is 2.' });
      expect((await callTool(source.tools(), 'remote__get-tiny-image', {})).content).toMatch(/\[image: image\/png, \d+ KB\]/);
    });
  });

  describe('when a Local session calls a tool of server-everything over HTTP', () => {
    it('should send the result back to the model', async () => {
      const http = await startEverythingHttp();
      child = http.child;
      emulator = await startOpenAiEmulator({
        script: [{ toolCalls: [{ id: 'c1', name: 'remote__echo', arguments: { message: 'via http' } }] }, { text: 'ok' }],
      });
      rx = await AgentRx.create({
        config: { providers: { local: { baseUrl: emulator.baseUrl, model: 'm' } }, mcp: { servers: { remote: { url: http.url } } } },
        modules: [mcpModule],
      });
      expect((await rx.run({ prompt: 'go' })).text).toBe('ok');
      const second = emulator.requests.find((r) => r.completion === 1)!.body as { messages: { role: string; tool_call_id?: string; content?: unknown }[] };
      expect(second.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'c1')?.content).toBe('Echo: via http');
    });
  });
});
