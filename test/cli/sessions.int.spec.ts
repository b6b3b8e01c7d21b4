import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { formatCassette, parseCassette, type Cassette } from '../../src/core/store/cassette.js';
import { runCli } from '../../src/cli/cli.js';
import { MemorySessionStore } from '../../src/core/store/memory/memory-session-store.js';
import type { SessionStore } from '../../src/core/store/session-store.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { tempDir } from '../support/temp-dir.js';
import { recordSession, type RecordedSession } from './record-session.js';
import { testIo, type TestIo } from '../support/cli-io.js';

const io = (opts: { cwd?: string; store?: SessionStore; env?: Record<string, string> } = {}): TestIo =>
  testIo({ ...opts, env: { NO_COLOR: '1', ...opts.env } });

const argv = (...args: string[]) => ['node', 'agentrx', ...args];

/** Durations legitimately differ between a live run and its rendering. */
const maskTimes = (s: string): string => s.replace(/ \d+\.\ds$/gm, ' <T>s');

/** AG-UI events without what a rendering legitimately changes: nothing but object identity. */
const lines = (s: string): unknown[] =>
  s
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);

describe('agentrx sessions and replay', () => {
  let store: MemorySessionStore;
  let recorded: RecordedSession;
  let dir: string;
  beforeAll(async () => {
    store = new MemorySessionStore();
    recorded = await recordSession(store);
    dir = await tempDir('agentrx-sessions-', { scope: 'file' });
  });

  describe('sessions ls', () => {
    describe('when the store holds a session', () => {
      it('should print a table with its id, provider, status, turns and update time', async () => {
        const t = io({ store });
        expect(await runCli(argv('sessions', 'ls'), t)).toBe(0);
        const [head, row, ...rest] = t.stdout().trimEnd().split('\n');
        expect(head).toMatch(/^ID +PROVIDER +STATUS +TURNS +UPDATED$/);
        expect(row).toMatch(new RegExp(`^${recorded.sessionId} +local +\\w+ +2 +\\d{4}-\\d\\d-\\d\\dT`));
        expect(rest).toEqual([]);
      });
    });

    describe('when --json is given', () => {
      it('should print one JSON object per session', async () => {
        const t = io({ store });
        expect(await runCli(argv('sessions', 'ls', '--json'), t)).toBe(0);
        expect(lines(t.stdout())).toEqual([{ id: recorded.sessionId, provider: 'local', status: expect.any(String), turns: 2, updated: expect.any(String) }]);
      });
    });

    describe('when the state directory does not exist yet', () => {
      it('should say there are no sessions and exit 0', async () => {
        const t = io({ env: { AGENTRX_STATE_DIR: join(dir, 'never-created') } });
        expect(await runCli(argv('sessions', 'ls'), t)).toBe(0);
        expect(t.stdout()).toBe('');
        expect(t.stderr()).toContain(`no sessions in ${join(dir, 'never-created')}`);
      });
    });
  });

  describe('sessions show', () => {
    describe('when the session exists', () => {
      it('should render the log as the terminal renderer printed it live (timings aside)', async () => {
        const t = io({ store });
        expect(await runCli(argv('sessions', 'show', recorded.sessionId), t)).toBe(0);
        expect(maskTimes(t.stdout())).toBe(maskTimes(recorded.terminal));
        expect(t.stdout()).toContain('⚙ echo({"text":"hi"}) → HI');
        expect(t.stderr()).toContain(`session ${recorded.sessionId} · local`);
      });
    });

    describe('when --agui is given', () => {
      it('should print the AG-UI events the consumers saw live', async () => {
        const t = io({ store });
        expect(await runCli(argv('sessions', 'show', recorded.sessionId, '--agui'), t)).toBe(0);
        expect(lines(t.stdout())).toEqual(JSON.parse(JSON.stringify(recorded.agui)));
      });
    });

    describe('when the id is unknown', () => {
      it('should exit 1 naming the id, with a hint', async () => {
        const t = io({ store });
        expect(await runCli(argv('sessions', 'show', 'no-such-session'), t)).toBe(1);
        expect(t.stderr()).toMatch(/^agentrx: no session 'no-such-session' in .*sessions ls/m);
        expect(t.stderr()).toMatch(/^hint: /m);
      });
    });

    describe('when both --json and --agui are given', () => {
      it('should exit 2 saying they cannot be combined', async () => {
        const t = io({ store });
        expect(await runCli(argv('sessions', 'show', recorded.sessionId, '--json', '--agui'), t)).toBe(2);
        expect(t.stderr()).toContain('cannot be combined');
      });
    });
  });

  describe('sessions export, then replay', () => {
    let file: string;
    beforeAll(async () => {
      file = join(dir, 'session.cassette.json');
      const t = io({ store, cwd: dir });
      expect(await runCli(argv('sessions', 'export', recorded.sessionId, '-o', 'session.cassette.json'), t)).toBe(0);
    });

    describe('when exported', () => {
      it('should write a version-2 cassette with the record and the whole log', async () => {
        const cassette = parseCassette(await readFile(file, 'utf8'), file);
        expect(cassette.version).toBe(2);
        expect(cassette.record).toMatchObject({ sessionId: recorded.sessionId, provider: 'local' });
        expect(cassette.envelopes).toEqual(JSON.parse(JSON.stringify(recorded.envelopes)));
      });

      it('should write the same text to stdout without -o', async () => {
        const t = io({ store });
        expect(await runCli(argv('sessions', 'export', recorded.sessionId), t)).toBe(0);
        expect(t.stdout()).toBe(await readFile(file, 'utf8'));
      });
    });

    describe('when replayed', () => {
      it('should render like sessions show', async () => {
        const t = io();
        expect(await runCli(argv('replay', file), t)).toBe(0);
        expect(maskTimes(t.stdout())).toBe(maskTimes(recorded.terminal));
      });

      it('should print the AG-UI events with --agui and the envelopes with --json', async () => {
        const agui = io();
        expect(await runCli(argv('replay', file, '--agui'), agui)).toBe(0);
        expect(lines(agui.stdout())).toEqual(JSON.parse(JSON.stringify(recorded.agui)));
        const json = io();
        expect(await runCli(argv('replay', file, '--json'), json)).toBe(0);
        expect(lines(json.stdout())).toEqual(JSON.parse(JSON.stringify(recorded.envelopes)));
      });
    });

    describe('when replayed with --pace', () => {
      it('should wait the recorded gaps between events', async () => {
        const cassette = parseCassette(await readFile(file, 'utf8'), file);
        const start = cassette.envelopes[0]!.at;
        // Events 20 ms apart, except the first two.
        const paced: Cassette = { ...cassette, envelopes: cassette.envelopes.map((e, i) => ({ ...e, at: start + Math.max(0, i - 1) * 20 })) };
        const pacedFile = join(dir, 'paced.json');
        await writeFile(pacedFile, formatCassette(paced));
        const fast = Date.now();
        expect(await runCli(argv('replay', pacedFile, '--agui'), io())).toBe(0);
        const fastMs = Date.now() - fast;
        const slow = Date.now();
        expect(await runCli(argv('replay', pacedFile, '--agui', '--pace'), io())).toBe(0);
        const slowMs = Date.now() - slow;
        expect(slowMs).toBeGreaterThanOrEqual((paced.envelopes.length - 2) * 20 - 20);
        expect(fastMs).toBeLessThan(slowMs);
      });
    });
  });

  describe('replay of a file that is not a good cassette', () => {
    const cases: [string, (good: string) => string, RegExp][] = [
      ['a truncated file', (good) => good.slice(0, Math.floor(good.length / 2)), /cassette .* is truncated/],
      ['a newer version', (good) => good.replace('{"version":2,', '{"version":3,'), /was written by a newer agentrx \(version 3; this build reads version 2\)/],
      ['JSON that is not a cassette', () => '{"hello":"world"}', /is not an agentrx cassette/],
      ['a log with a gap', (good) => good.replace(/"seq":2,/, '"seq":3,'), /is not a whole log: envelope 1 has seq 3, expected 2/],
    ];
    it.each(cases)('should exit 1 naming the file and what is wrong, for %s', async (_name, spoil, message) => {
      const good = await readFile(join(dir, 'session.cassette.json'), 'utf8');
      const bad = join(dir, `bad-${Math.random().toString(36).slice(2)}.json`);
      await writeFile(bad, spoil(good));
      const t = io();
      expect(await runCli(argv('replay', bad), t)).toBe(1);
      expect(t.stderr()).toMatch(message);
      expect(t.stderr()).toContain(bad);
      expect(t.stderr()).toMatch(/^hint: a cassette is the JSON file written by agentrx sessions export or run --record$/m);
    });

    it('should exit 1 with the cause when the file is missing', async () => {
      const t = io({ cwd: dir });
      expect(await runCli(argv('replay', 'missing.json'), t)).toBe(1);
      expect(t.stderr()).toContain(`cannot read cassette ${join(dir, 'missing.json')}: ENOENT`);
    });
  });

  describe('run', () => {
    let emu: OpenAiEmulator;
    const script = () => [{ toolCalls: [{ id: 'c1', name: 'calculate', arguments: { expression: '2 + 3' } }] }, { text: 'It is 5.' }];
    afterEach(async () => {
      await emu?.close();
    });

    describe('when --record is given', () => {
      it('should write the cassette of the run and tell where', async () => {
        emu = await startOpenAiEmulator({ script: script() });
        const runStore = new MemorySessionStore();
        const t = io({ store: runStore, cwd: dir });
        expect(await runCli(argv('run', 'what is 2 + 3', '--base-url', emu.baseUrl, '--record', 'run.cassette.json'), t)).toBe(0);
        const cassette = parseCassette(await readFile(join(dir, 'run.cassette.json'), 'utf8'), 'run.cassette.json');
        expect(cassette.record.provider).toBe('local');
        expect(cassette.envelopes.filter((e) => e.source === 'agentrx' && e.raw.type === 'agentrx.tool_result')).toHaveLength(1);
        expect(cassette.envelopes.at(-1)!.raw).toMatchObject({ type: 'agentrx.run_finished', terminal: 'end_turn' });
        expect(t.stderr()).toMatch(new RegExp(`session ${cassette.record.sessionId} recorded to run.cassette.json`));
        expect(t.stderr()).toContain(`agentrx run --resume ${cassette.record.sessionId}`);
      });
    });

    describe('with the file store, then --resume in a later command', () => {
      it('should list the session, continue it with the earlier messages, and show both runs', async () => {
        emu = await startOpenAiEmulator({ script: [...script(), { text: 'Times two is 10.' }] });
        const storeDir = join(dir, 'file-store');
        const first = io({ env: { AGENTRX_STATE_DIR: storeDir } });
        expect(await runCli(argv('run', 'what is 2 + 3', '--base-url', emu.baseUrl), first)).toBe(0);
        const id = /continue it with: agentrx run --resume (\S+) /.exec(first.stderr())?.[1];
        expect(id).toBeDefined();

        const ls = io({ env: { AGENTRX_STATE_DIR: storeDir } });
        expect(await runCli(argv('sessions', 'ls', '--json'), ls)).toBe(0);
        expect(lines(ls.stdout())).toEqual([expect.objectContaining({ id, provider: 'local', turns: 2 })]);

        const second = io({ cwd: dir });
        expect(await runCli(argv('run', 'and times two?', '--base-url', emu.baseUrl, '--store', 'file-store', '--resume', id!), second)).toBe(0);
        expect(second.stdout()).toContain('Times two is 10.');
        const chats = emu.requests.filter((r) => r.path.endsWith('/chat/completions'));
        const messages = (chats.at(-1)!.body as { messages: { role: string; content?: string }[] }).messages;
        expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['what is 2 + 3', 'and times two?']);
        expect(messages.some((m) => m.role === 'tool')).toBe(true);

        const show = io({ env: { AGENTRX_STATE_DIR: storeDir } });
        expect(await runCli(argv('sessions', 'show', id!), show)).toBe(0);
        expect(show.stdout()).toContain('It is 5.');
        expect(show.stdout()).toContain('Times two is 10.');
        expect(show.stdout().match(/^✓ end_turn/gm)).toHaveLength(2);
      });
    });

    describe('when --resume names a session the store does not hold', () => {
      it('should exit 1 before calling the host, naming the id', async () => {
        emu = await startOpenAiEmulator({ script: script() });
        const t = io({ store: new MemorySessionStore() });
        expect(await runCli(argv('run', 'and now?', '--base-url', emu.baseUrl, '--resume', 'sess-unknown'), t)).toBe(1);
        expect(t.stderr()).toMatch(/^agentrx: no session 'sess-unknown' in .* to resume/m);
        expect(emu.requests).toHaveLength(0);
      });
    });

    describe('when --resume names a session of another provider than --provider', () => {
      it('should exit 2 naming both providers', async () => {
        emu = await startOpenAiEmulator({ script: script() });
        const t = io({ store });
        expect(await runCli(argv('run', 'and now?', '--provider', 'bedrock-agentcore', '--resume', recorded.sessionId), t)).toBe(2);
        expect(t.stderr()).toContain(`session '${recorded.sessionId}' ran on provider 'local'; it cannot be resumed with 'bedrock-agentcore'`);
      });
    });

    describe('when --store is not a usable directory', () => {
      it('should exit 1 naming the directory', async () => {
        const notDir = join(dir, 'a-file');
        await writeFile(notDir, 'x');
        const t = io();
        expect(await runCli(argv('run', 'hi', '--store', join(notDir, 'sub')), t)).toBe(1);
        expect(t.stderr()).toContain(`cannot use the session store ${join(notDir, 'sub')}`);
      });
    });

    describe('when the default state directory cannot be created', () => {
      it('should warn and run with the session in memory', async () => {
        emu = await startOpenAiEmulator({ script: script() });
        const notDir = join(dir, 'another-file');
        await writeFile(notDir, 'x');
        const t = io({ env: { AGENTRX_STATE_DIR: join(notDir, 'state') } });
        expect(await runCli(argv('run', 'what is 2 + 3', '--base-url', emu.baseUrl), t)).toBe(0);
        expect(t.stderr()).toMatch(/warning: cannot use the session store .* from AGENTRX_STATE_DIR\); this session is kept in memory only/);
        expect(t.stdout()).toContain('It is 5.');
      });
    });
  });
});
