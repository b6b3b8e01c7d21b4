import { jest } from '@jest/globals';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAgentRxError } from '../../../src/core/errors.js';
import { ToolRegistryImpl } from '../../../src/core/tools/tool-registry.js';
import { McpToolSource } from '../../../src/plugins/mcp/mcp.source.js';
import { loadMcpSdk } from '../../../src/plugins/mcp/mcp-sdk.js';
import { tempDirSync } from '../../support/temp-dir.js';
import { EVERYTHING, FILESYSTEM, RecordingLogger, callTool, isAlive, mcpOptions, nodeServer, waitFor } from './mcp-helpers.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const DYNAMIC = join(FIXTURES, 'dynamic-server.mjs');
const PROXY = join(FIXTURES, 'recording-proxy.mjs');

jest.setTimeout(30_000);

describe('McpToolSource over stdio', () => {
  let source: McpToolSource | undefined;
  let logger: RecordingLogger;
  let dir: string;

  beforeEach(() => {
    logger = new RecordingLogger();
    dir = tempDirSync('agentrx-mcp-');
  });

  afterEach(async () => {
    await source?.stop();
    source = undefined;
  });

  async function start(servers: Record<string, unknown>): Promise<McpToolSource> {
    source = new McpToolSource(logger, mcpOptions(servers), undefined);
    await source.start();
    return source;
  }

  async function startFailure(servers: Record<string, unknown>): Promise<Error> {
    const s = new McpToolSource(logger, mcpOptions(servers), undefined);
    try {
      await s.start();
    } catch (e) {
      return e as Error;
    } finally {
      await s.stop();
    }
    throw new Error('start did not fail');
  }

  describe('.start', () => {
    describe('when a server never answers initialize and writes to stderr', () => {
      it('should fail naming the server with the tail of its stderr, leaving nothing running', async () => {
        // The budget is what the server is given to start and write its stderr line: a loaded
        // machine can take over a second to start node (300 ms once missed the line).
        const err = await startFailure({
          stuck: {
            command: process.execPath,
            args: ['-e', "process.stderr.write('booting the widget\\n'); setInterval(() => {}, 1e9)"],
            startTimeoutMs: 5_000,
          },
        });
        expect(isAgentRxError(err, 'timeout')).toBe(true);
        expect(err.message).toBe(
          'MCP server stuck did not answer initialize within 5000 ms (raise mcp.servers.stuck.startTimeoutMs if it needs longer to start); its stderr ended with:\nbooting the widget',
        );
      });
    });

    describe('when the command does not exist', () => {
      it('should fail with invalid_config naming the server and the command', async () => {
        const err = await startFailure({ ghost: { command: 'agentrx-no-such-mcp-server' } });
        expect(isAgentRxError(err, 'invalid_config')).toBe(true);
        expect(err.message).toBe("MCP server ghost command 'agentrx-no-such-mcp-server' was not found (is it installed and on PATH?)");
      });
    });

    describe('when the server exits at once', () => {
      it('should fail naming the server and what it printed', async () => {
        const err = await startFailure({ quits: { command: process.execPath, args: ['-e', "console.error('missing API key'); process.exit(3)"] } });
        expect(err.message).toMatch(/^MCP server quits could not be started: .*Connection closed/);
        expect(err.message).toContain('missing API key');
      });
    });

    describe('when the server prints garbage on stdout instead of answering', () => {
      it('should fail naming the server (bounded by the start timeout)', async () => {
        const err = await startFailure({
          noisy: { command: process.execPath, args: ['-e', "console.log('hello, not json'); setInterval(() => {}, 1e9)"], startTimeoutMs: 300 },
        });
        expect(err.message).toMatch(/^MCP server noisy did not answer initialize within 300 ms/);
      });
    });

    describe('when an env value shows up in the stderr tail', () => {
      it('should redact it', async () => {
        const err = await startFailure({
          leaky: {
            command: process.execPath,
            args: ['-e', 'console.error("token is " + process.env.API_TOKEN); setInterval(() => {}, 1e9)'],
            env: { API_TOKEN: 'sekrit-value-123' },
            startTimeoutMs: 300,
          },
        });
        expect(err.message).toContain('token is [redacted]');
        expect(err.message).not.toContain('sekrit-value-123');
        expect(logger.lines.join('\n')).not.toContain('sekrit-value-123');
      });
    });

    describe('when one of two servers fails', () => {
      it('should fail naming it and stop the other one (no orphan)', async () => {
        const s = new McpToolSource(logger, mcpOptions({ everything: nodeServer(EVERYTHING), ghost: { command: 'agentrx-no-such-mcp-server' } }), undefined);
        const pids: number[] = [];
        const poll = setInterval(() => {
          const pid = (s as unknown as { servers: { pid?: number }[] }).servers[0]?.pid;
          if (pid) pids.push(pid);
        }, 5);
        await expect(s.start()).rejects.toThrow(/^MCP server ghost command/);
        clearInterval(poll);
        expect(s.tools()).toEqual([]);
        for (const pid of pids) expect(isAlive(pid)).toBe(false);
      });
    });

    describe('when the SDK is not installed', () => {
      it('should say to install it', async () => {
        const missing = (specifier: string) =>
          import(specifier.replace('@modelcontextprotocol/sdk', '@modelcontextprotocol/agentrx-missing-sdk')) as Promise<Record<string, unknown>>;
        await expect(loadMcpSdk(missing)).rejects.toThrow('install @modelcontextprotocol/sdk to use mcp servers');
      });
    });
  });

  describe('.tools', () => {
    describe('when server-everything started', () => {
      it("should offer its tools as <server>__<tool> with the server's descriptions and schemas", async () => {
        const s = await start({ everything: nodeServer(EVERYTHING) });
        const echo = s.tools().find((t) => t.name === 'everything__echo');
        expect(echo).toMatchObject({ description: 'Echoes back the input string', source: 'mcp:everything' });
        expect(echo?.inputSchema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });
        expect(s.tools().map((t) => t.name)).toEqual(
          expect.arrayContaining(['everything__get-sum', 'everything__get-tiny-image', 'everything__trigger-long-running-operation']),
        );
        expect(s.tools().every((t) => t.name.startsWith('everything__'))).toBe(true);
      });
    });

    describe('when allow and deny lists are configured', () => {
      it('should offer only allowed tools minus denied ones, and mark requireApproval', async () => {
        const s = await start({
          everything: { ...nodeServer(EVERYTHING), allow: ['echo', 'get-sum', 'no-such-tool'], deny: ['get-sum'], requireApproval: ['echo'] },
        });
        expect(s.tools().map((t) => t.name)).toEqual(['everything__echo']);
        expect(s.tools()[0]!.requireApproval).toBe(true);
        expect(logger.lines.join('\n')).toContain("allow/deny names tool 'no-such-tool', which the server does not list");
      });
    });
  });

  describe('tool calls', () => {
    describe('when a call is valid', () => {
      it('should map text, images and structured content to the tool result', async () => {
        const s = await start({ everything: nodeServer(EVERYTHING) });
        expect(await callTool(s.tools(), 'everything__echo', { message: 'hi' })).toMatchObject({ content: 'Echo: hi', isError: false });
        expect(await callTool(s.tools(), 'everything__get-sum', { a: 2, b: 40 })).toMatchObject({ content: 'The sum of 2 and 40 is 42.', isError: false });
        expect((await callTool(s.tools(), 'everything__get-tiny-image', {})).content).toMatch(/\[image: image\/png, \d+ KB\]/);
        expect(JSON.parse((await callTool(s.tools(), 'everything__get-structured-content', { location: 'Chicago' })).content)).toHaveProperty('temperature');
      });
    });

    describe('when the input is invalid', () => {
      it('should answer is_error naming the fields, without calling the server', async () => {
        const s = await start({ everything: nodeServer(EVERYTHING) });
        const r = await callTool(s.tools(), 'everything__get-sum', { a: 'two' });
        expect(r).toMatchObject({ isError: true, content: "invalid input for tool 'everything__get-sum': b: is required; a: must be number" });
      });
    });

    describe('when the server answers isError', () => {
      it('should stay an error', async () => {
        const s = await start({ files: nodeServer(FILESYSTEM, dir) });
        const r = await callTool(s.tools(), 'files__read_text_file', { path: '/etc/hostname' });
        expect(r.isError).toBe(true);
        expect(r.content).toMatch(/access denied|outside allowed/i);
        writeFileSync(join(dir, 'note.txt'), 'hello from disk');
        expect(await callTool(s.tools(), 'files__read_text_file', { path: join(dir, 'note.txt') })).toMatchObject({
          isError: false,
          content: 'hello from disk',
        });
      });
    });

    describe('when the result is over the size cap', () => {
      it('should cut it and say so', async () => {
        const s = await start({ everything: { ...nodeServer(EVERYTHING), maxResultChars: 1000 } });
        const r = await callTool(s.tools(), 'everything__echo', { message: 'x'.repeat(3000) });
        expect(r.content.startsWith(`Echo: ${'x'.repeat(994)}\n[truncated: 2006 more characters`)).toBe(true);
      });
    });

    describe('when a call times out', () => {
      it('should answer is_error and send notifications/cancelled to the server', async () => {
        const record = join(dir, 'sent.jsonl');
        const s = await start({
          slow: { command: process.execPath, args: [PROXY, process.execPath, EVERYTHING], env: { RECORD_FILE: record }, timeoutMs: 300 },
        });
        const r = await callTool(s.tools(), 'slow__trigger-long-running-operation', { duration: 30, steps: 30 });
        expect(r).toMatchObject({ isError: true, content: "tool 'slow__trigger-long-running-operation' timed out after 300 ms" });
        await waitFor(() => existsSync(record) && readFileSync(record, 'utf8').includes('notifications/cancelled'), 'notifications/cancelled');
        const sent = readFileSync(record, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { id?: number; method?: string; params?: { requestId?: number; name?: string } });
        const call = sent.find((m) => m.method === 'tools/call' && m.params?.name === 'trigger-long-running-operation');
        expect(sent.find((m) => m.method === 'notifications/cancelled')?.params?.requestId).toBe(call?.id);
      });
    });

    describe('when the session is cancelled during a call', () => {
      it('should send notifications/cancelled for it', async () => {
        const record = join(dir, 'sent.jsonl');
        const s = await start({ slow: { command: process.execPath, args: [PROXY, process.execPath, EVERYTHING], env: { RECORD_FILE: record } } });
        const ctrl = new AbortController();
        const running = callTool(s.tools(), 'slow__trigger-long-running-operation', { duration: 30, steps: 30 }, { signal: ctrl.signal });
        await waitFor(() => existsSync(record) && readFileSync(record, 'utf8').includes('trigger-long-running-operation'), 'the call to reach the server');
        ctrl.abort();
        await expect(running).rejects.toMatchObject({ code: 'cancelled' });
        await waitFor(() => readFileSync(record, 'utf8').includes('notifications/cancelled'), 'notifications/cancelled');
      });
    });
  });

  describe('list changes', () => {
    describe('when the server adds and removes tools (notifications/tools/list_changed)', () => {
      it('should refresh the list, which the registry and dispatcher see', async () => {
        source = new McpToolSource(logger, mcpOptions({ dyn: nodeServer(DYNAMIC) }), undefined);
        const registry = new ToolRegistryImpl([], [source], logger);
        await registry.participants[0]!.start!();
        expect(registry.ids).toEqual(['dyn__add_tool', 'dyn__remove_tool', 'dyn__fail']);

        await callTool(registry, 'dyn__add_tool', { name: 'weather' });
        await waitFor(() => registry.ids.includes('dyn__weather'), 'the added tool');
        expect(await callTool(registry, 'dyn__weather', {})).toMatchObject({ isError: false, content: 'weather ran' });

        const stale = registry.get('dyn__weather')!;
        await callTool(registry, 'dyn__remove_tool', { name: 'weather' });
        await waitFor(() => !registry.ids.includes('dyn__weather'), 'the removed tool to go');
        expect(await callTool(registry, 'dyn__weather', {})).toMatchObject({ isError: true, content: expect.stringMatching(/^unknown tool 'dyn__weather'/) });
        // A call that was already dispatched to the removed tool: the server's error, naming server and tool.
        expect(await callTool([stale], 'dyn__weather', {})).toMatchObject({
          isError: true,
          content: expect.stringMatching(/^MCP server dyn: tool 'weather' failed: .*Tool weather not found/),
        });
      });
    });

    describe('when a tool appears with an invalid JSON Schema', () => {
      it('should leave that tool out with a warning naming server and tool, and keep the others', async () => {
        const s = await start({ dyn: nodeServer(DYNAMIC) });
        await callTool(s.tools(), 'dyn__add_tool', { name: 'broken', schema: { type: 'object', properties: { q: { type: 'strin' } } } });
        await callTool(s.tools(), 'dyn__add_tool', { name: 'fine' });
        await waitFor(() => s.tools().some((t) => t.name === 'dyn__fine'), 'the valid tool');
        expect(s.tools().map((t) => t.name)).not.toContain('dyn__broken');
        expect(logger.lines.join('\n')).toMatch(/MCP server dyn: tool 'broken' is left out: tool 'dyn__broken': invalid input JSON Schema/);
      });
    });

    describe('when server-everything announces its conditional tools after initialize', () => {
      it('should list the tools again', async () => {
        const record = join(dir, 'sent.jsonl');
        await start({ everything: { command: process.execPath, args: [PROXY, process.execPath, EVERYTHING], env: { RECORD_FILE: record } } });
        await waitFor(() => readFileSync(record, 'utf8').split('"method":"tools/list"').length - 1 >= 2, 'a second tools/list');
        expect(readFileSync(record, 'utf8')).toContain('tools/list');
      });
    });

    describe('when the server answers isError', () => {
      it('should stay an error', async () => {
        const s = await start({ dyn: nodeServer(DYNAMIC) });
        expect(await callTool(s.tools(), 'dyn__fail', {})).toEqual(expect.objectContaining({ isError: true, content: 'the widget is broken' }));
      });
    });
  });

  describe('lifecycle', () => {
    describe('when the server is killed during a call', () => {
      it('should answer "MCP server <name> exited" and restart the server', async () => {
        const s = await start({ everything: { ...nodeServer(EVERYTHING), restartBaseMs: 10 } });
        const first = s.pids.everything!;
        const running = callTool(s.tools(), 'everything__trigger-long-running-operation', { duration: 30, steps: 30 });
        // The call is in flight once the server has it; killing the child then is the crash.
        await new Promise((r) => setImmediate(r));
        process.kill(first, 'SIGKILL');
        const r = await running;
        expect(r.isError).toBe(true);
        expect(r.content).toMatch(/^MCP server everything exited/);
        await waitFor(() => s.pids.everything !== undefined && s.pids.everything !== first, 'the restart');
        expect(isAlive(s.pids.everything!)).toBe(true);
        expect(await callTool(s.tools(), 'everything__echo', { message: 'back' })).toMatchObject({ content: 'Echo: back', isError: false });
        expect(logger.lines.join('\n')).toContain('MCP server everything restarted');
      });
    });

    describe('when the server keeps crashing past maxRestarts', () => {
      it('should give it up and remove its tools', async () => {
        const s = await start({ everything: { ...nodeServer(EVERYTHING), maxRestarts: 0 } });
        const changes: number[] = [];
        s.onDidChangeTools(() => changes.push(s.tools().length));
        process.kill(s.pids.everything!, 'SIGKILL');
        await waitFor(() => s.tools().length === 0, 'the tools to be removed');
        expect(changes.at(-1)).toBe(0);
        expect(logger.lines.join('\n')).toContain('MCP server everything gave up after 0 restarts; its tools are removed');
        expect(await callTool(s.tools(), 'everything__echo', { message: 'x' })).toMatchObject({
          isError: true,
          content: expect.stringMatching(/^unknown tool 'everything__echo'/),
        });
      });
    });

    describe('when the source stops', () => {
      it('should leave no child process', async () => {
        const s = await start({ everything: nodeServer(EVERYTHING), files: nodeServer(FILESYSTEM, dir) });
        const pids = Object.values(s.pids) as number[];
        expect(pids).toHaveLength(2);
        for (const pid of pids) expect(isAlive(pid)).toBe(true);
        await s.stop();
        for (const pid of pids) expect(isAlive(pid)).toBe(false);
      });
    });
  });
});
