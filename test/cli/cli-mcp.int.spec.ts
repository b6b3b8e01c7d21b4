import { PassThrough } from 'node:stream';
import { runCli, type CliIo } from '../../src/cli/cli.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { EVERYTHING } from '../plugins/mcp/mcp-helpers.js';

function io(): CliIo & { stdout: () => string; stderr: () => string } {
  const out = new PassThrough();
  const err = new PassThrough();
  const chunks = { out: [] as Buffer[], err: [] as Buffer[] };
  out.on('data', (c: Buffer) => chunks.out.push(c));
  err.on('data', (c: Buffer) => chunks.err.push(c));
  return { out, err, env: {}, cwd: process.cwd(), stdout: () => Buffer.concat(chunks.out).toString(), stderr: () => Buffer.concat(chunks.err).toString() };
}

const argv = (...args: string[]): string[] => ['node', 'agentrx', ...args];
/** The real server-everything over stdio, as a user would pass it to --mcp. */
const everything = `every=${process.execPath} ${EVERYTHING}`;

describe('agentrx CLI with MCP servers', () => {
  let emu: OpenAiEmulator | undefined;
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  describe('agentrx tools --mcp … --json', () => {
    it('should print one JSON line per tool: the local tools and the server’s, each with its source', async () => {
      const t = io();
      expect(await runCli(argv('tools', '--mcp', everything, '--json'), t)).toBe(0);
      const rows = t.stdout().trim().split('\n').map((l) => JSON.parse(l) as { name: string; source: string });
      expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(['calculate', 'every__echo']));
      expect(rows.find((r) => r.name === 'every__echo')).toMatchObject({ source: expect.stringContaining('every') });
    }, 60_000);
  });

  describe('agentrx run --mcp …', () => {
    it('should give the model the server’s tools and run a call through the server', async () => {
      emu = await startOpenAiEmulator({ script: [{ toolCalls: [{ id: 'c1', name: 'every__echo', arguments: { message: 'hi from mcp' } }] }, { text: 'Echoed.' }] });
      const t = io();
      const code = await runCli(argv('run', 'echo it', '--base-url', emu.baseUrl, '--model', 'scripted', '--mcp', everything), t);
      expect(t.stderr()).toBe('');
      expect(code).toBe(0);
      const completions = emu.requests.filter((r) => r.completion !== undefined);
      const tools = (completions[0]!.body as { tools: { function: { name: string } }[] }).tools.map((x) => x.function.name);
      expect(tools).toContain('every__echo');
      const second = (completions[1]!.body as { messages: { role: string; content?: string }[] }).messages;
      expect(second.find((m) => m.role === 'tool')?.content).toContain('hi from mcp');
    }, 60_000);
  });
});
