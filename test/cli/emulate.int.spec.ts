import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../src/cli/cli.js';
import { tempDir } from '../support/temp-dir.js';
import { testIo, type TestIo } from '../support/cli-io.js';

/** A CLI io whose output is collected; `lines` resolves at the first line of stdout. */
const io = (cwd: string, signal?: AbortSignal): TestIo => testIo({ cwd, env: { NO_COLOR: '1' }, ...(signal ? { signal } : {}) });

describe('agentrx emulate', () => {
  it.each(['claude-managed-agents', 'bedrock-agentcore'])(
    'should serve the %s emulator, print a config for it that the provisioning commands use, and exit 0 when stopped',
    async (host) => {
      const dir = await tempDir('agentrx-cli-emulate-');
      const stop = new AbortController();
      const t = io(dir, stop.signal);
      const serving = runCli(['node', 'agentrx', 'emulate', host], t);
      const config = JSON.parse(await t.firstLine) as { provider: string };
      expect(config.provider).toBe(host);
      await writeFile(join(dir, 'agentrx.json'), JSON.stringify({ ...config, logLevel: 'silent', agent: { name: 'support' } }));

      const family = host === 'claude-managed-agents' ? 'agents' : 'harnesses';
      const p = io(dir);
      expect(await runCli(['node', 'agentrx', family, 'provision', '-c', 'agentrx.json', '--store', 'state'], p)).toBe(0);
      expect(p.stdout()).toMatch(/^created /);

      stop.abort();
      expect(await serving).toBe(0);
      expect(t.stderr()).toContain(`agentrx emulate: ${host} on http://127.0.0.1:`);
    },
    60_000,
  );

  it('should refuse an unknown host and a bad port with one line each and exit 2', async () => {
    const dir = await tempDir('agentrx-cli-emulate-');
    const a = io(dir);
    expect(await runCli(['node', 'agentrx', 'emulate', 'openai'], a)).toBe(2);
    expect(a.stderr()).toBe("agentrx emulate: unknown host 'openai'; emulated hosts: claude-managed-agents, bedrock-agentcore\n");
    const b = io(dir);
    expect(await runCli(['node', 'agentrx', 'emulate', 'claude-managed-agents', '--port', 'x'], b)).toBe(2);
    expect(b.stderr()).toBe('agentrx emulate: --port takes a whole number from 0 to 65535; got "x"\n');
  });
});
