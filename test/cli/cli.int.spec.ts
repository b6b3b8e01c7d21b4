import { createServer } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../src/cli/cli.js';
import { startCmaEmulator } from '../../src/testing/cma-emulator.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { tempDir } from '../support/temp-dir.js';
import { testIo, type TestIo } from '../support/cli-io.js';

const io = (cwd = process.cwd()): TestIo => testIo({ cwd });

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const argv = (...args: string[]) => ['node', 'agentrx', ...args];

describe('agentrx CLI', () => {
  describe('demo', () => {
    describe('when run with the default prompt', () => {
      it('should stream an answer that used at least two tools, print a summary and exit 0', async () => {
        const dir = await tempDir('agentrx-cli-');
        await writeFile(join(dir, 'README.md'), '# hello from the readme\n');
        // `read_file` reads from the invocation's working directory (`cwd`), not the process's.
        const t = io(dir);
        const code = await runCli(argv('demo'), t);
        expect(code).toBe(0);
        const out = t.stdout();
        expect(out.match(/^⚙ /gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
        expect(out).toContain('calculate({"expression":"(17 + 25) * 3"}) → (17 + 25) * 3 = 126');
        expect(out).toContain('hello from the readme');
        expect(out).toMatch(/✓ end_turn · turns 2 · tool calls 3 · tokens \d+ in \/ \d+ out · \d+\.\ds/);
      });
    });

    describe('when --json is given', () => {
      it('should print one parseable AG-UI event per line', async () => {
        const t = io();
        expect(await runCli(argv('demo', 'what is 2 + 2', '--json'), t)).toBe(0);
        const events = t
          .stdout()
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { type: string });
        expect(events[0]!.type).toBe('RUN_STARTED');
        expect(events.at(-1)!.type).toBe('RUN_FINISHED');
        expect(events.some((e) => e.type === 'TOOL_CALL_RESULT')).toBe(true);
      });
    });
  });

  describe('run', () => {
    describe('when given --instructions, --temperature and --output-schema', () => {
      let emu: OpenAiEmulator | undefined;
      afterEach(async () => {
        await emu?.close();
        emu = undefined;
      });

      it('should send them with the model call and validate the answer against the schema file', async () => {
        emu = await startOpenAiEmulator({ script: [{ text: '{"total": 126}' }] });
        const dir = await tempDir('agentrx-cli-');
        await writeFile(join(dir, 'out.json'), JSON.stringify({ type: 'object', properties: { total: { type: 'integer' } }, required: ['total'] }));
        const t = io(dir);
        const flags = ['--provider', 'local', '--base-url', emu.baseUrl, '--model', 'scripted', '--instructions', 'Be exact.', '--temperature', '0.3'];
        const code = await runCli(argv('run', 'sum', ...flags, '--output-schema', 'out.json', '--json'), t);
        expect(t.stderr()).toBe('');
        expect(code).toBe(0);
        const body = emu.requests.find((r) => r.completion === 0)!.body as Record<string, unknown> & { messages: { role: string; content: string }[] };
        expect(body).toMatchObject({ temperature: 0.3, response_format: { type: 'json_schema' } });
        expect(body.messages[0]).toEqual({ role: 'system', content: 'Be exact.' });
        const finished = t
          .stdout()
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { type: string; result?: unknown })
          .find((e) => e.type === 'RUN_FINISHED');
        expect(finished?.result).toMatchObject({ output: { total: 126 } });
      });

      it('should refuse a temperature out of range and a schema file that is not JSON, naming the flag', async () => {
        const dir = await tempDir('agentrx-cli-');
        await writeFile(join(dir, 'bad.json'), '{ not json');
        const hot = io(dir);
        expect(await runCli(argv('run', 'x', '--provider', 'local', '--temperature', '7'), hot)).toBe(2);
        expect(hot.stderr()).toContain('--temperature takes a number from 0 to 2; got "7"');
        const broken = io(dir);
        expect(await runCli(argv('run', 'x', '--provider', 'local', '--output-schema', 'bad.json'), broken)).toBe(2);
        expect(broken.stderr()).toMatch(/--output-schema: bad\.json is not JSON/);
      });
    });

    describe('when the base URL has nothing listening', () => {
      it('should exit 1 with a message naming the URL and a hint', async () => {
        const url = `http://127.0.0.1:${await closedPort()}/v1`;
        const dir = await tempDir('agentrx-cli-');
        await writeFile(join(dir, 'c.json'), JSON.stringify({ providers: { local: { maxRetries: 1, retryBaseMs: 5 } } }));
        const t = io(dir);
        const code = await runCli(argv('run', 'hi', '--config', 'c.json', '--base-url', url, '--timeout', '5000'), t);
        expect(code).toBe(1);
        expect(t.stderr()).toContain(url);
        expect(t.stderr()).toMatch(/^hint: nothing answers at/m);
      });
    });

    describe('when the host asks to confirm a tool of its own', () => {
      const script = [{ serverToolUses: [{ id: 'sevt_ws', name: 'web_search', ask: true }] }, { text: 'Done.' }];
      const configFor = (baseUrl: string): string =>
        JSON.stringify({ provider: 'claude-managed-agents', providers: { 'claude-managed-agents': { apiKey: 'sk-ant-cli-test-key', baseUrl } } });

      /** Runs `agentrx run search --config c.json …extra` against a CMA emulator. */
      async function runAgainstCma(...extra: string[]): Promise<{ code: number; stderr: string; confirmations: Record<string, unknown>[] }> {
        const emu = await startCmaEmulator({ apiKey: 'sk-ant-cli-test-key', script });
        try {
          const dir = await tempDir('agentrx-cli-');
          await writeFile(join(dir, 'c.json'), configFor(emu.baseUrl));
          const t = io(dir);
          const code = await runCli(argv('run', 'search', '--config', 'c.json', ...extra), t);
          const confirmations = [...emu.sessions.values()].flatMap((x) => x.received).filter((e) => e['type'] === 'user.tool_confirmation');
          return { code, stderr: t.stderr(), confirmations };
        } finally {
          await emu.close();
        }
      }

      it('should answer with --confirm and finish', async () => {
        const { code, confirmations } = await runAgainstCma('--confirm', 'deny');
        expect(code).toBe(0);
        expect(confirmations).toEqual([expect.objectContaining({ tool_use_id: 'sevt_ws', result: 'deny' })]);
      });

      it('should exit 1 without --confirm, naming the tool, with a hint', async () => {
        const { code, stderr, confirmations } = await runAgainstCma();
        expect(code).toBe(1);
        expect(stderr).toContain("'web_search' (sevt_ws)");
        expect(stderr).toMatch(/^hint: pass --confirm allow/m);
        expect(confirmations).toEqual([]);
      });
    });

    describe('when the config is invalid', () => {
      it('should exit 2 listing every bad field without the secret', async () => {
        const dir = await tempDir('agentrx-cli-');
        await writeFile(
          join(dir, 'bad.json'),
          JSON.stringify({
            limits: { maxTurns: 0, toolConcurrency: 'many' },
            providers: { local: { baseUrl: 'nope', apiKey: 'sk-very-secret-123' } },
            colour: true,
          }),
        );
        const t = io(dir);
        const code = await runCli(argv('run', 'hi', '--config', 'bad.json'), t);
        expect(code).toBe(2);
        const err = t.stderr();
        for (const path of ['limits.maxTurns', 'limits.toolConcurrency', 'providers.local.baseUrl', 'colour']) expect(err).toContain(`- ${path}:`);
        expect(err).not.toContain('sk-very-secret-123');
        expect(err).toMatch(/^hint: fix the fields listed above/m);
      });
    });

    describe('when the config file is not valid JSON around a secret', () => {
      it('should exit 2 locating the error without quoting the file', async () => {
        const dir = await tempDir('agentrx-cli-');
        // An unquoted key: V8's own message quotes the text around it ("apiKey": sk-live-AB…).
        await writeFile(join(dir, 'broken.json'), '{"providers": {"local": {"apiKey": sk-live-CLILEAK-0123456789}}}');
        const t = io(dir);
        expect(await runCli(argv('run', 'hi', '--config', 'broken.json'), t)).toBe(2);
        const err = t.stderr();
        expect(err).toMatch(/broken\.json is not valid JSON: .* at position 35 \(line 1 column 36\)/);
        expect(err).not.toContain('sk-live');
        expect(err).not.toContain('CLILEAK');
      });
    });

    describe('when the config file is missing', () => {
      it('should exit 2 naming the file', async () => {
        const t = io();
        expect(await runCli(argv('run', 'hi', '--config', 'does-not-exist.json'), t)).toBe(2);
        expect(t.stderr()).toContain('does-not-exist.json');
      });
    });
  });

  describe('run against a model (what it offers and loads)', () => {
    let emu: OpenAiEmulator | undefined;
    afterEach(async () => {
      await emu?.close();
      emu = undefined;
    });
    const offered = (e: OpenAiEmulator): string[] =>
      ((e.requests[0]?.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name);

    describe('when no tools are asked for', () => {
      it('should offer the model no demo tools (read_file would read the working folder)', async () => {
        emu = await startOpenAiEmulator({ script: [{ text: 'Hi.' }] });
        const dir = await tempDir('agentrx-cli-');
        expect(await runCli(argv('run', 'hi', '--base-url', emu.baseUrl, '--store', dir), io(dir))).toBe(0);
        expect(offered(emu)).toEqual([]);
      });
    });

    describe('when --demo-tools is given', () => {
      it('should offer the three demo tools', async () => {
        emu = await startOpenAiEmulator({ script: [{ text: 'Hi.' }] });
        const dir = await tempDir('agentrx-cli-');
        expect(await runCli(argv('run', 'hi', '--base-url', emu.baseUrl, '--store', dir, '--demo-tools'), io(dir))).toBe(0);
        expect(offered(emu).sort()).toEqual(['calculate', 'get_time', 'read_file']);
      });
    });

    describe("when --module and the config's modules name ES modules exporting tools", () => {
      it('should offer and run those tools', async () => {
        emu = await startOpenAiEmulator({ script: [{ toolCalls: [{ name: 'shout', arguments: { text: 'hi' } }] }, { text: 'Done.' }] });
        const dir = await tempDir('agentrx-cli-');
        const tool = (name: string): string =>
          `export const tools = [{ name: '${name}', description: 'Upper-cases.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, handle: ({ text }) => text.toUpperCase() + '!' }];\n`;
        await writeFile(join(dir, 'shout.mjs'), tool('shout'));
        await writeFile(join(dir, 'whisper.mjs'), tool('whisper'));
        // One config file for every command: the agui section (serve's) is accepted by run.
        await writeFile(join(dir, 'c.json'), JSON.stringify({ modules: ['./whisper.mjs'], agui: { port: 0 } }));
        expect(await runCli(argv('run', 'hi', '-c', 'c.json', '--base-url', emu.baseUrl, '--store', dir, '--module', 'shout.mjs'), io(dir))).toBe(0);
        expect(offered(emu).sort()).toEqual(['shout', 'whisper']);
        expect(JSON.stringify(emu.requests[1]?.body)).toContain('HI!');
      });
    });

    describe('when --module names a file that does not exist', () => {
      it('should exit 2 naming it', async () => {
        const dir = await tempDir('agentrx-cli-');
        const t = io(dir);
        expect(await runCli(argv('tools', '--module', 'nope.mjs'), t)).toBe(2);
        expect(t.stderr()).toContain(`module ${join(dir, 'nope.mjs')} does not exist`);
      });
    });
  });

  describe('one config file for every command', () => {
    it('should let tools read a config with sections only serve uses', async () => {
      const dir = await tempDir('agentrx-cli-');
      await writeFile(join(dir, 'c.json'), JSON.stringify({ agui: { port: 0, maxThreads: 10 }, modules: [] }));
      const t = io(dir);
      expect(await runCli(argv('tools', '-c', 'c.json', '--json'), t)).toBe(0);
      expect(t.stderr()).toBe('');
    });
  });

  describe('bad option values', () => {
    it.each([
      ['--max-turns', 'abc'],
      ['--max-turns', '0'],
      ['--timeout', '1.5'],
    ])('should name %s and the value %s, and exit 2', async (flag, value) => {
      const t = io();
      expect(await runCli(argv('run', 'hi', flag, value), t)).toBe(2);
      expect(t.stderr()).toContain(`agentrx: ${flag} takes a whole number from 1 to 2147483647; got "${value}"`);
    });
  });

  describe('usage', () => {
    it('should exit 0 for --version and --help', async () => {
      const v = io();
      expect(await runCli(argv('--version'), v)).toBe(0);
      expect(v.stdout().trim()).toMatch(/^\d+\.\d+\.\d+$/);
      const h = io();
      expect(await runCli(argv('--help'), h)).toBe(0);
      expect(h.stdout()).toContain('demo');
    });

    it('should exit 2 on an unknown option or provider', async () => {
      expect(await runCli(argv('run', 'hi', '--frobnicate'), io())).toBe(2);
      expect(await runCli(argv('run', 'hi', '--provider', 'nope'), io())).toBe(2);
      expect(await runCli(argv('run'), io())).toBe(2);
    });
  });
});
