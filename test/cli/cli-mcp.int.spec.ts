import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { AgentRx } from '../../src/agentrx.js';
import { runCli } from '../../src/cli/cli.js';
import { mcpProgressTo, withMcpFlags } from '../../src/cli/mcp-flags.js';
import { demoToolsModule } from '../../src/plugins/tools/tools.module.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { EVERYTHING } from '../plugins/mcp/mcp-helpers.js';
import { tempDirSync } from '../support/temp-dir.js';
import { testIo, type TestIo } from '../support/cli-io.js';

const io = (): TestIo => testIo();

const argv = (...args: string[]): string[] => ['node', 'agentrx', ...args];
/** The real server-everything over stdio, as a user would pass it to --mcp. */
const everything = `every=${process.execPath} ${EVERYTHING}`;
/** A stdio MCP server that never answers `initialize` (see the fixture). */
const SLOW = join(dirname(fileURLToPath(import.meta.url)), '..', 'plugins', 'mcp', 'fixtures', 'slow-start.mjs');

describe('agentrx CLI with MCP servers', () => {
  let emu: OpenAiEmulator | undefined;
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  describe('agentrx tools --mcp … --json', () => {
    it('should print one JSON line per tool: the local tools and the server’s, each with its source', async () => {
      const t = io();
      expect(await runCli(argv('tools', '--mcp', everything, '--json', '--demo-tools'), t)).toBe(0);
      const rows = t
        .stdout()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { name: string; source: string });
      expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(['calculate', 'every__echo']));
      expect(rows.find((r) => r.name === 'every__echo')).toMatchObject({ source: expect.stringContaining('every') });
    }, 60_000);
  });

  describe('agentrx run --mcp …', () => {
    it('should give the model the server’s tools and run a call through the server', async () => {
      emu = await startOpenAiEmulator({
        script: [{ toolCalls: [{ id: 'c1', name: 'every__echo', arguments: { message: 'hi from mcp' } }] }, { text: 'Echoed.' }],
      });
      const t = io();
      const code = await runCli(argv('run', 'echo it', '--base-url', emu.baseUrl, '--model', 'scripted', '--mcp', everything), t);
      // Nothing on stderr but the server's start-up progress, if that is shown.
      expect(
        t
          .stderr()
          .split('\n')
          .filter((l) => l !== '' && !l.startsWith('agentrx: mcp every: ')),
      ).toEqual([]);
      expect(code).toBe(0);
      const completions = emu.requests.filter((r) => r.completion !== undefined);
      const tools = (completions[0]!.body as { tools: { function: { name: string } }[] }).tools.map((x) => x.function.name);
      expect(tools).toContain('every__echo');
      const second = (completions[1]!.body as { messages: { role: string; content?: string }[] }).messages;
      expect(second.find((m) => m.role === 'tool')?.content).toContain('hi from mcp');
    }, 60_000);
  });

  describe('when an --mcp server does not answer initialize within its startTimeoutMs', () => {
    it('should print the named error and a hint naming mcp.servers.<name>.startTimeoutMs, which a config file can set for the flag’s server', async () => {
      const config = join(tempDirSync('agentrx-cli-mcp-'), 'agentrx.json');
      writeFileSync(config, JSON.stringify({ mcp: { servers: { stuck: { startTimeoutMs: 2_000 } } } }));
      const t = io();
      const code = await runCli(argv('tools', '-c', config, '--mcp', `stuck=${process.execPath} ${SLOW} never`), t);
      expect(code).toBe(1);
      const lines = t.stderr().split('\n');
      expect(lines).toContain(
        'agentrx: MCP server stuck did not answer initialize within 2000 ms (raise mcp.servers.stuck.startTimeoutMs if it needs longer to start)',
      );
      expect(lines.find((l) => l.startsWith('hint: '))).toBe(
        'hint: raise mcp.servers.stuck.startTimeoutMs in a config file (-c), e.g. {"mcp":{"servers":{"stuck":{"startTimeoutMs":180000}}}} (with --mcp stuck=… the command still comes from the flag); a first npx/uvx run downloads the package',
      );
      expect(t.stderr()).not.toContain('--timeout');
    }, 60_000);
  });

  describe('when an --mcp command does not exist', () => {
    it('should say so with a hint about the command, not about the config fields', async () => {
      const t = io();
      expect(await runCli(argv('tools', '--mcp', 'ghost=agentrx-no-such-mcp-server --flag'), t)).toBe(2);
      expect(t.stderr()).toMatch(
        /^agentrx: mcp ghost: starting \(agentrx-no-such-mcp-server --flag\)\nagentrx: mcp ghost: failed after \d+\.\d s\nagentrx: MCP server ghost command 'agentrx-no-such-mcp-server' was not found \(is it installed and on PATH\?\)\nhint: install it, or fix the command of --mcp ghost=… \(or mcp\.servers\.ghost\.command\)\n$/,
      );
    }, 60_000);
  });

  describe('mcpProgressTo (the start-up progress of run and tools)', () => {
    it('should print one line per server state change to the stream', async () => {
      const err = new PassThrough();
      const chunks: Buffer[] = [];
      err.on('data', (c: Buffer) => chunks.push(c));
      const rx = await AgentRx.create({
        config: withMcpFlags({ providers: { local: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } } }, [everything]),
        modules: [demoToolsModule, mcpProgressTo(err, { quietMs: 60_000 })],
      });
      await rx.stop();
      const lines = Buffer.concat(chunks).toString().trim().split('\n');
      expect(lines).toEqual([
        `agentrx: mcp every: starting (${process.execPath} ${EVERYTHING})`,
        expect.stringMatching(/^agentrx: mcp every: ready, \d+ tools in \d+\.\d s$/),
      ]);
    }, 60_000);
  });
});
