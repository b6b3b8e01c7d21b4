import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../src/cli/cli.js';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../src/testing/agentcore-emulator.js';
import { startCmaEmulator, type CmaEmulator, type CmaEmulatorOptions } from '../../src/testing/cma-emulator.js';
import { tempDir } from '../support/temp-dir.js';
import { testIo, type TestIo } from '../support/cli-io.js';

const io = (cwd: string): TestIo => testIo({ cwd, env: { NO_COLOR: '1' } });

const argv = (...args: string[]) => ['node', 'agentrx', ...args];
const API_KEY = 'sk-ant-cli-provision-test';
const ROLE = 'arn:aws:iam::123456789012:role/agentcore-exec';
const CREDS = { accessKeyId: 'AKIDAGENTRXCLI01', secretAccessKey: 'agentcore-cli-secret-42' };

/** Runs the CLI in `dir` and returns its exit code and output. */
async function cli(dir: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const t = io(dir);
  const code = await runCli(argv(...args), t);
  return { code, out: t.stdout(), err: t.stderr() };
}

const jsonLines = (s: string): Record<string, unknown>[] =>
  s
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('agentrx agents / environments (Claude Managed Agents emulator)', () => {
  let emu: CmaEmulator | undefined;
  let dir: string;
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  /** A config file for the emulator with the agent's system prompt `prompt`; returns its path. */
  async function config(prompt: string, extra: Record<string, unknown> = {}): Promise<string> {
    const file = join(dir, `config-${prompt.length}-${Math.random().toString(36).slice(2)}.json`);
    const section = { apiKey: API_KEY, baseUrl: emu!.baseUrl, retryBaseMs: 1, ...extra };
    await writeFile(
      file,
      JSON.stringify({ logLevel: 'silent', agent: { name: 'support', systemPrompt: prompt }, providers: { 'claude-managed-agents': section } }),
    );
    return file;
  }

  async function start(o: CmaEmulatorOptions = {}): Promise<void> {
    emu = await startCmaEmulator({ apiKey: API_KEY, ...o });
    dir = await tempDir('agentrx-cli-provision-');
  }

  it('should provision, reuse, list, tag and prune agent versions through the store directory', async () => {
    await start();
    const store = join(dir, 'state');
    const c1 = await config('One.');
    const first = await cli(dir, 'agents', 'provision', '-c', c1, '--store', store);
    expect(first).toMatchObject({ code: 0, err: '' });
    expect(first.out).toMatch(/^created {2}support_([0-9a-f]{8}) {2}agent_\d+ {2}\1\n$/);
    const again = await cli(dir, 'agents', 'provision', '-c', c1, '--store', store, '--json');
    const [reused] = jsonLines(again.out);
    expect(reused).toMatchObject({ kind: 'agent', base: 'support', created: false, digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    for (const prompt of ['Two.', 'Three.']) expect((await cli(dir, 'agents', 'provision', '-c', await config(prompt), '--store', store)).code).toBe(0);

    const tag = await cli(dir, 'agents', 'tag', 'support:prod', String(reused!['digest']).slice(0, 8), '-c', c1, '--store', store);
    expect(tag).toMatchObject({
      code: 0,
      out: `support:prod → ${String(reused!['name'])}  ${String(reused!['id'])}  ${String(reused!['digest']).slice(0, 8)}\n`,
    });

    const ls = await cli(dir, 'agents', 'ls', '-c', c1, '--store', store);
    const [head, ...rows] = ls.out.trimEnd().split('\n');
    expect(head).toMatch(/^NAME +ID +DIGEST +CREATED +TAGS +ARCHIVED$/);
    expect(rows).toHaveLength(3);
    expect(rows[2]).toMatch(
      new RegExp(`^${String(reused!['name'])} +${String(reused!['id'])} +[0-9a-f]{8} +\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ +prod +no$`),
    );

    const dry = await cli(dir, 'agents', 'prune', '--keep', '1', '--dry-run', '-c', c1, '--store', store);
    expect(dry.code).toBe(0);
    expect(dry.out).toMatch(/^would archive +support_[0-9a-f]{8}/m);
    expect(dry.out.match(/^kept /gm)).toHaveLength(2);
    expect([...emu!.agents.values()].every((a) => a['archived_at'] === null)).toBe(true);

    const pruned = await cli(dir, 'agents', 'prune', '--keep', '1', '--json', '-c', c1, '--store', store);
    expect(pruned.code).toBe(0);
    expect(jsonLines(pruned.out).map((l) => l['action'])).toEqual(['archived', 'kept', 'kept']);
    const listed = jsonLines((await cli(dir, 'agents', 'ls', '--json', '-c', c1, '--store', store)).out);
    expect(listed.map((l) => [l['archived'], l['tags']])).toEqual([
      [false, []],
      [true, []],
      [false, ['prod']],
    ]);

    const none = await cli(dir, 'environments', 'ls', '-c', c1, '--store', store);
    expect(none).toMatchObject({ code: 0, out: '', err: "agentrx: no environment versions of 'agentrx' on the host\n" });
    expect((await cli(dir, 'environments', 'provision', '-c', c1, '--store', store)).out).toMatch(/^created {2}agentrx_[0-9a-f]{8} {2}env_\d+ /);
    const envs = await cli(dir, 'environments', 'ls', '-c', c1, '--store', store);
    expect(envs.out.trimEnd().split('\n')[1]).toMatch(/^agentrx_[0-9a-f]{8} +env_\d+ +[0-9a-f]{8} +\S+ +- +no$/);
  });

  it("should let 'agentrx run --store' select the agent a tag names in that store (agent: 'support:prod')", async () => {
    await start({ script: [{ text: 'Hello from prod.' }] });
    const store = join(dir, 'state');
    const prod = jsonLines((await cli(dir, 'agents', 'provision', '-c', await config('One.'), '--store', store, '--json')).out)[0]!;
    expect((await cli(dir, 'agents', 'provision', '-c', await config('Two.'), '--store', store)).code).toBe(0);
    expect((await cli(dir, 'agents', 'tag', 'support:prod', String(prod['digest']), '-c', await config('One.'), '--store', store)).code).toBe(0);

    const byTag = await config('Three.', { agent: 'support:prod' });
    const run = await cli(dir, 'run', 'hi', '-c', byTag, '--store', store, '--provider', 'claude-managed-agents');
    expect(run).toMatchObject({ code: 0 });
    expect(run.out).toContain('Hello from prod.');
    const created = emu!.requests.filter((r) => r.method === 'POST' && r.path === '/v1/sessions');
    expect(created.map((r) => (r.body as Record<string, unknown>)['agent'])).toEqual([prod['id']]);
    // No third version was provisioned for the run.
    expect(emu!.agents.size).toBe(2);

    const unknown = await cli(
      dir,
      'run',
      'hi',
      '-c',
      await config('Three.', { agent: 'support:staging' }),
      '--store',
      store,
      '--provider',
      'claude-managed-agents',
    );
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain(
      "agent 'support' has no tag 'staging' in this provision store (its tags: prod); tag a version first, with the same store: agentrx agents tag support:staging <digest>",
    );
  });

  it('should print what a partial prune archived, name the failure and exit 1', async () => {
    await start({ faults: { archiveFaults: { agents: { 1: { kind: 'status', status: 403 } } } } });
    const store = join(dir, 'state');
    let c = '';
    for (const prompt of ['A.', 'B.', 'C.', 'D.']) {
      c = await config(prompt);
      expect((await cli(dir, 'agents', 'provision', '-c', c, '--store', store)).code).toBe(0);
    }
    const pruned = await cli(dir, 'agents', 'prune', '--keep', '1', '-c', c, '--store', store);
    expect(pruned.code).toBe(1);
    expect(pruned.out).toMatch(/^archived +support_/m);
    expect(pruned.out).toMatch(/^failed +support_/m);
    expect(pruned.err).toMatch(/^agentrx: archive of support_[0-9a-f]{8} \(agent_\d+\) failed: .*403/m);
    expect(pruned.err).toContain('hint: ');
    expect(pruned.err).not.toContain(API_KEY);
  });

  it('should refuse a bad --keep, a bad reference and an unknown digest with one line naming it', async () => {
    await start();
    const c = await config('One.');
    const store = join(dir, 'state');
    const keep = await cli(dir, 'agents', 'prune', '--keep', '0', '-c', c, '--store', store);
    expect(keep).toMatchObject({ code: 2, err: expect.stringContaining('--keep takes a whole number from 1') });
    const ref = await cli(dir, 'agents', 'tag', 'prod', 'abcdef12', '-c', c, '--store', store);
    expect(ref).toMatchObject({ code: 2, err: expect.stringContaining("write '<base>:<tag>'") });
    const unknown = await cli(dir, 'agents', 'tag', 'support:prod', 'abcdef12', '-c', c, '--store', store);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/^agentrx: .*abcdef12/m);
  });
});

describe('agentrx harnesses (AgentCore emulator)', () => {
  let emulator: AgentCoreEmulator | undefined;
  afterEach(async () => {
    await emulator?.close();
    emulator = undefined;
  });

  it('should provision, list, tag and prune harness versions, and delete on prune', async () => {
    emulator = await startAgentCoreEmulator({ credentials: CREDS });
    const dir = await tempDir('agentrx-cli-harness-');
    const store = join(dir, 'state');
    const config = async (prompt: string): Promise<string> => {
      const file = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
      const section = { endpoint: emulator!.baseUrl, region: 'eu-west-1', ...CREDS, executionRoleArn: ROLE, pollIntervalMs: 1, retryBaseMs: 1 };
      await writeFile(
        file,
        JSON.stringify({ logLevel: 'silent', agent: { name: 'support', systemPrompt: prompt }, providers: { 'bedrock-agentcore': section } }),
      );
      return file;
    };
    const files: string[] = [];
    for (const prompt of ['One.', 'Two.', 'Three.']) {
      files.push(await config(prompt));
      const r = await cli(dir, 'harnesses', 'provision', '-c', files.at(-1)!, '--store', store);
      expect(r.out).toMatch(/^created {2}agentrx_support_[0-9a-f]{8} {2}\S+ {2}[0-9a-f]{8}\n$/);
    }
    const [oldest] = jsonLines((await cli(dir, 'harnesses', 'ls', '--json', '-c', files[0]!, '--store', store)).out).reverse();
    expect((await cli(dir, 'harnesses', 'tag', 'support:prod', String(oldest!['digest']), '-c', files[0]!, '--store', store)).code).toBe(0);
    const pruned = await cli(dir, 'harnesses', 'prune', '--keep', '1', '-c', files[0]!, '--store', store);
    expect(pruned.code).toBe(0);
    expect(pruned.out.match(/^deleted /gm)).toHaveLength(1);
    expect(
      emulator
        .harnesses()
        .map((h) => h.harnessName)
        .sort(),
    ).toEqual([String(oldest!['name']), jsonLines((await cli(dir, 'harnesses', 'ls', '--json', '-c', files[0]!, '--store', store)).out)[0]!['name']].sort());
    expect(pruned.err).toBe('');
  });

  it('should name the missing executionRoleArn instead of asking the control plane', async () => {
    emulator = await startAgentCoreEmulator({ credentials: CREDS });
    const dir = await tempDir('agentrx-cli-harness-');
    const file = join(dir, 'config.json');
    const section = { endpoint: emulator.baseUrl, region: 'eu-west-1', ...CREDS };
    await writeFile(file, JSON.stringify({ logLevel: 'silent', providers: { 'bedrock-agentcore': section } }));
    const r = await cli(dir, 'harnesses', 'provision', '-c', file, '--store', join(dir, 'state'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^agentrx: bedrock-agentcore: creating a harness needs providers\.bedrock-agentcore\.executionRoleArn/m);
    expect(r.err).not.toContain(CREDS.secretAccessKey);
    expect(emulator.requests).toHaveLength(0);
  });
});
