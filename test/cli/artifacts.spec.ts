import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../src/cli/cli.js';
import { startCmaEmulator, type CmaEmulator } from '../../src/testing/cma-emulator.js';
import { tempDir } from '../support/temp-dir.js';
import { testIo, type TestIo } from '../support/cli-io.js';

const KEY = 'sk-ant-cli-artifacts-key';

const io = (cwd: string): TestIo => testIo({ cwd, env: { NO_COLOR: '1', AGENTRX_STATE_DIR: join(cwd, 'state') } });

const argv = (...args: string[]) => ['node', 'agentrx', 'artifacts', ...args];

describe('agentrx artifacts', () => {
  let emu: CmaEmulator;
  let dir: string;
  let sessionId: string;
  beforeEach(async () => {
    emu = await startCmaEmulator({ apiKey: KEY });
    dir = await tempDir('agentrx-artifacts-');
    await writeFile(
      join(dir, 'agentrx.json'),
      JSON.stringify({ provider: 'claude-managed-agents', providers: { 'claude-managed-agents': { apiKey: KEY, baseUrl: emu.baseUrl, retryBaseMs: 1 } } }),
    );
    sessionId = emu.seedSession([]);
  });
  afterEach(() => emu.close());

  describe('put, ls, get and rm', () => {
    it('should round-trip a 2 MB file through files, with progress on stderr', async () => {
      const big = Buffer.alloc(2 * 1024 * 1024, 7);
      await writeFile(join(dir, 'big.bin'), big);
      const session = ['--session', sessionId, '-c', 'agentrx.json'];

      const p = io(dir);
      expect(await runCli(argv('put', 'big.bin', ...session), p)).toBe(0);
      expect(p.stderr()).toMatch(/big\.bin: uploaded 2\.0 of 2\.0 MB \(100%\)/);
      expect(p.stderr()).toContain(`stored big.bin (${big.length} bytes) in claude-managed-agents session ${sessionId}`);

      const ls = io(dir);
      expect(await runCli(argv('ls', ...session, '--json'), ls)).toBe(0);
      expect(
        ls
          .stdout()
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as unknown),
      ).toEqual([expect.objectContaining({ name: 'big.bin', size: big.length })]);

      const g = io(dir);
      expect(await runCli(argv('get', 'big.bin', ...session, '-o', 'copy.bin'), g)).toBe(0);
      expect(g.stderr()).toMatch(/big\.bin: downloaded 2\.0 of 2\.0 MB \(100%\)/);
      expect((await readFile(join(dir, 'copy.bin'))).equals(big)).toBe(true);

      const rm = io(dir);
      expect(await runCli(argv('rm', 'big.bin', ...session), rm)).toBe(0);
      const empty = io(dir);
      expect(await runCli(argv('ls', ...session), empty)).toBe(0);
      expect(empty.stderr()).toContain(`no artifacts in claude-managed-agents session ${sessionId}`);
    });

    it('should write a small artifact to stdout and list it as text', async () => {
      await writeFile(join(dir, 'notes.txt'), 'small notes');
      const session = ['--session', sessionId, '--config', 'agentrx.json', '--provider', 'claude-managed-agents'];
      expect(await runCli(argv('put', 'notes.txt', '--name', 'n.txt', ...session), io(dir))).toBe(0);
      const ls = io(dir);
      expect(await runCli(argv('ls', ...session), ls)).toBe(0);
      expect(ls.stdout()).toMatch(/^n\.txt +11 +\S+\n$/);
      const g = io(dir);
      expect(await runCli(argv('get', 'n.txt', ...session), g)).toBe(0);
      expect(g.stdout()).toBe('small notes');
      expect(g.stderr()).toBe('');
    });
  });

  describe('when the artifact is missing or the name unsafe', () => {
    it('should fail with one line saying so', async () => {
      const missing = io(dir);
      expect(await runCli(argv('get', 'nope.txt', '--session', sessionId, '-c', 'agentrx.json'), missing)).toBe(1);
      expect(missing.stderr()).toMatch(/^agentrx: no artifact named "nope\.txt"/);
      const bad = io(dir);
      expect(await runCli(argv('rm', '..', '--session', sessionId, '-c', 'agentrx.json'), bad)).toBe(1);
      expect(bad.stderr()).toMatch(/^agentrx: invalid artifact name "\.\."/);
    });
  });

  describe('when the provider has no artifacts', () => {
    it('should fail with unsupported naming it', async () => {
      const p = io(dir);
      expect(await runCli(argv('ls', '--session', 'x', '--provider', 'local'), p)).toBe(1);
      expect(p.stderr()).toContain('the local provider has no session artifacts');
    });
  });
});
