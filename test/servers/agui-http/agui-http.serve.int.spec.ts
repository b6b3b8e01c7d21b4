import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HttpAgent } from '@ag-ui/client';
import { runCli } from '../../../src/cli/cli.js';
import { readCassette } from '../../../src/core/store/cassette.js';
import { tempDir } from '../../support/temp-dir.js';
import { postJson, runInput, waitForOutput } from './agui-http.fixtures.js';
import { testIo, type TestIo } from '../../support/cli-io.js';

const io = (env: Record<string, string> = {}, signal?: AbortSignal): TestIo => testIo({ env, ...(signal ? { signal } : {}) });

const argv = (...args: string[]) => ['node', 'agentrx', ...args];

describe('agentrx serve', () => {
  // A server still running after a failed assertion is stopped here (before its temp folder goes).
  const running: { stop: AbortController; exit: Promise<number> }[] = [];
  const track = (stop: AbortController, exit: Promise<number>): Promise<number> => (running.push({ stop, exit }), exit);
  afterEach(async () => {
    for (const r of running.splice(0)) {
      r.stop.abort();
      await r.exit.catch(() => undefined);
    }
  });

  describe('when run with --demo and a token in AGENTRX_TOKEN', () => {
    it('should print the URL, serve the page and a token-protected demo agent, and stop on the signal', async () => {
      const stop = new AbortController();
      const t = io({ AGENTRX_TOKEN: 'demo-token-42' }, stop.signal);
      const url = waitForOutput(t.out, /^(http:\/\/127\.0\.0\.1:\d+\/)$/m);
      const exit = track(stop, runCli(argv('serve', '--demo', '--port', '0'), t));
      const base = (await url)[1]!;

      expect((await fetch(base)).headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect((await postJson(`${base}agent`, runInput())).status).toBe(401);

      const agent = new HttpAgent({ url: `${base}agent`, threadId: 'cli-thread', headers: { authorization: 'Bearer demo-token-42' } });
      agent.addMessage({ id: 'u1', role: 'user', content: 'what is (17 + 25) * 3' });
      const failures: unknown[] = [];
      await agent.runAgent({ runId: 'cli-run' }, { onRunFailed: ({ error }) => void failures.push(error) });
      expect(failures).toEqual([]);
      const call = agent.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []))[0];
      expect(call?.function).toEqual({ name: 'calculate', arguments: '{"expression":"(17 + 25) * 3"}' });
      expect(agent.messages.find((m) => m.role === 'tool')?.content).toBe('(17 + 25) * 3 = 126');
      expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: expect.stringContaining('126') });

      stop.abort();
      expect(await exit).toBe(0);
      expect(t.stderr()).toContain('bearer token required');
      await expect(fetch(`${base}healthz`)).rejects.toThrow();
    });
  });

  describe('when run with --store and --record', () => {
    it('should write each session to the record directory as a cassette once it closes', async () => {
      const dir = await tempDir('agentrx-serve-record-');
      const stop = new AbortController();
      const t = io({}, stop.signal);
      const url = waitForOutput(t.out, /^(http:\/\/127\.0\.0\.1:\d+\/)$/m);
      const exit = track(stop, runCli(argv('serve', '--demo', '--port', '0', '--store', join(dir, 'store'), '--record', join(dir, 'rec')), t));
      const base = (await url)[1]!;
      const agent = new HttpAgent({ url: `${base}agent`, threadId: 'rec-thread' });
      agent.addMessage({ id: 'u1', role: 'user', content: 'what is (17 + 25) * 3' });
      await agent.runAgent({ runId: 'rec-run' });
      stop.abort();
      expect(await exit).toBe(0);
      const files = await readdir(join(dir, 'rec'));
      expect(files).toHaveLength(1);
      const cassette = await readCassette(join(dir, 'rec', files[0]!));
      expect(cassette.record).toMatchObject({ provider: 'local', threadId: 'rec-thread', status: 'cancelled' });
      expect(cassette.envelopes.some((e) => e.source === 'agentrx' && e.raw.type === 'agentrx.tool_result')).toBe(true);
      expect(cassette.envelopes.map((e) => e.seq)).toEqual(cassette.envelopes.map((_, i) => i + 1));
    });
  });

  describe('when the port is not a number', () => {
    it('should exit 2 naming the option', async () => {
      const t = io();
      expect(await runCli(argv('serve', '--demo', '--port', 'eighty'), t)).toBe(2);
      expect(t.stderr()).toContain('agentrx: --port takes a whole number from 0 to 65535; got "eighty"');
    });
  });

  describe('when the config file has an invalid agui section', () => {
    it('should exit 2 listing the field', async () => {
      const dir = await tempDir('agentrx-serve-');
      await writeFile(join(dir, 'c.json'), JSON.stringify({ agui: { maxConcurrentRuns: 0, colour: 'blue' } }));
      const t = io();
      expect(await runCli(argv('serve', '--demo', '--config', join(dir, 'c.json')), t)).toBe(2);
      expect(t.stderr()).toContain('- agui.maxConcurrentRuns:');
      expect(t.stderr()).toContain('- agui.colour:');
    });
  });

  describe('when the config file sets agui.port and --port is given too', () => {
    it('should listen on the --port', async () => {
      const dir = await tempDir('agentrx-serve-');
      await writeFile(join(dir, 'c.json'), JSON.stringify({ agui: { port: 1, host: '127.0.0.1' } }));
      const stop = new AbortController();
      const t = io({}, stop.signal);
      const url = waitForOutput(t.out, /^(http:\/\/127\.0\.0\.1:(\d+)\/)$/m);
      const exit = track(stop, runCli(argv('serve', '--demo', '--config', join(dir, 'c.json'), '--port', '0'), t));
      const m = await url;
      expect(Number(m[2])).toBeGreaterThan(1);
      expect((await fetch(`${m[1]}healthz`)).status).toBe(200);
      stop.abort();
      expect(await exit).toBe(0);
    });
  });
});
