import { jest } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentRx } from '../../../src/agentrx.js';
import { isAgentRxError } from '../../../src/core/errors.js';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import { mcpModule } from '../../../src/plugins/mcp/mcp.module.js';
import { McpToolSource } from '../../../src/plugins/mcp/mcp.source.js';
import { startOpenAiEmulator, type EmulatorTurn, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';
import { tempDirSync } from '../../support/temp-dir.js';
import { EVERYTHING, FILESYSTEM, isAlive, nodeServer } from './mcp-helpers.js';

jest.setTimeout(30_000);

type Body = {
  tools?: { function: { name: string; description: string; parameters: Record<string, unknown> } }[];
  messages: { role: string; content?: unknown; tool_call_id?: string }[];
};

describe('MCP servers in AgentRx', () => {
  let emulator: OpenAiEmulator | undefined;
  let rx: AgentRx | undefined;
  let dir: string;

  beforeEach(() => {
    dir = tempDirSync('agentrx-mcp-session-');
  });

  afterEach(async () => {
    await rx?.stop();
    await emulator?.close();
    rx = undefined;
    emulator = undefined;
  });

  async function create(servers: Record<string, unknown>, script: EmulatorTurn[], extra: { tools?: ReturnType<typeof defineTool>[] } = {}): Promise<AgentRx> {
    emulator = await startOpenAiEmulator({ script });
    return AgentRx.create({ config: { providers: { local: { baseUrl: emulator.baseUrl, model: 'm' } }, mcp: { servers } }, modules: [mcpModule], ...extra });
  }

  describe('when a server never answers initialize', () => {
    it('should fail AgentRx.create naming the server with its stderr tail', async () => {
      let err: unknown;
      try {
        // The budget is what the server is given to start and write its stderr line (a loaded machine can take over a second to start node).
        rx = await create(
          {
            stuck: { command: process.execPath, args: ['-e', "process.stderr.write('loading index…\\n'); setInterval(() => {}, 1e9)"], startTimeoutMs: 5_000 },
          },
          [],
        );
      } catch (e) {
        err = e;
      }
      expect(isAgentRxError(err, 'timeout')).toBe(true);
      expect((err as Error).message).toBe(
        'MCP server stuck did not answer initialize within 5000 ms (raise mcp.servers.stuck.startTimeoutMs if it needs longer to start); its stderr ended with:\nloading index…',
      );
    });
  });

  describe("when a server's tool name is taken by a local tool", () => {
    it('should fail AgentRx.create with invalid_config naming both, stopping the server', async () => {
      const local = defineTool({ name: 'everything__echo', description: 'mine', inputSchema: { type: 'object' }, handle: () => 'x' });
      let err: unknown;
      try {
        rx = await create({ everything: nodeServer(EVERYTHING) }, [], { tools: [local] });
      } catch (e) {
        err = e;
      }
      expect(isAgentRxError(err, 'invalid_config')).toBe(true);
      expect((err as Error).message).toContain(
        "tools.everything__echo: tool name 'everything__echo' of mcp:everything tool 'everything__echo' collides with schema tool 'everything__echo'",
      );
    });
  });

  describe('when a Local session calls filesystem and everything tools over stdio', () => {
    it('should declare them, run them, send the results back, and leave no child after stop', async () => {
      writeFileSync(join(dir, 'todo.txt'), 'buy milk');
      rx = await create({ everything: nodeServer(EVERYTHING), files: nodeServer(FILESYSTEM, dir) }, [
        {
          toolCalls: [
            { id: 'c1', name: 'everything__echo', arguments: { message: 'hello' } },
            { id: 'c2', name: 'everything__get-sum', arguments: { a: 20, b: 22 } },
            { id: 'c3', name: 'everything__get-tiny-image', arguments: {} },
            { id: 'c4', name: 'files__read_text_file', arguments: { path: join(dir, 'todo.txt') } },
          ],
        },
        { text: 'All done.' },
      ]);
      const pids = Object.values(rx.container.get(McpToolSource).pids) as number[];
      expect(pids).toHaveLength(2);
      const result = await rx.run({ prompt: 'go' });
      expect(result.text).toBe('All done.');

      const first = emulator!.requests.find((r) => r.completion === 0)!.body as Body;
      const echo = first.tools?.find((t) => t.function.name === 'everything__echo')?.function;
      expect(echo).toEqual({
        name: 'everything__echo',
        description: 'Echoes back the input string',
        parameters: expect.objectContaining({
          type: 'object',
          properties: { message: { type: 'string', description: 'Message to echo' } },
          required: ['message'],
        }),
      });
      expect(first.tools?.map((t) => t.function.name)).toEqual(expect.arrayContaining(['files__read_text_file', 'everything__get-sum']));

      const second = emulator!.requests.find((r) => r.completion === 1)!.body as Body;
      const answers = Object.fromEntries(second.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, String(m.content)]));
      expect(answers).toMatchObject({ c1: 'Echo: hello', c2: 'The sum of 20 and 22 is 42.', c4: 'buy milk' });
      expect(answers.c3).toMatch(/\[image: image\/png, \d+ KB\]/);

      await rx.stop();
      for (const pid of pids) expect(isAlive(pid)).toBe(false);
    });
  });

  describe('when a server requires approval and the caller allows one call and denies another', () => {
    it('should run only the allowed call, through confirmTool', async () => {
      rx = await create({ everything: { ...nodeServer(EVERYTHING), allow: ['echo'], requireApproval: true } }, [
        {
          toolCalls: [
            { id: 'c1', name: 'everything__echo', arguments: { message: 'yes' } },
            { id: 'c2', name: 'everything__echo', arguments: { message: 'no' } },
          ],
        },
        { text: 'ok' },
      ]);
      const asked: string[] = [];
      const result = await rx.run({
        prompt: 'go',
        confirmTool: (use) => {
          asked.push(use.id);
          return use.id === 'c1' ? true : { allow: false, denyMessage: 'not this one' };
        },
      });
      expect(result.text).toBe('ok');
      expect(asked.sort()).toEqual(['c1', 'c2']);
      const second = emulator!.requests.find((r) => r.completion === 1)!.body as Body;
      const answers = Object.fromEntries(second.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, String(m.content)]));
      expect(answers.c1).toBe('Echo: yes');
      expect(answers.c2).toContain('not this one');
    });
  });
});
