import { BedrockAgentCoreClient, InvokeAgentRuntimeCommandCommand } from '@aws-sdk/client-bedrock-agentcore';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../src/testing/agentcore-emulator.js';

const CREDS = { accessKeyId: 'AKIDCOMMANDS0001', secretAccessKey: 'commands-secret-not-logged' };
const ARN = 'arn:aws:bedrock-agentcore:us-east-1:123456789012:harness/storage';
const SID = 'commands-session-0123456789abcdef0123456789';

describe('the AgentCore emulator commands with @aws-sdk/client-bedrock-agentcore', () => {
  let emu: AgentCoreEmulator;
  let client: BedrockAgentCoreClient;
  beforeEach(async () => {
    emu = await startAgentCoreEmulator({ credentials: CREDS, region: 'us-east-1' });
    client = new BedrockAgentCoreClient({ region: 'us-east-1', endpoint: emu.baseUrl, credentials: CREDS, maxAttempts: 1 });
  });
  afterEach(async () => {
    client.destroy();
    await emu.close();
  });

  /** Runs `command` with the official SDK and gathers what the stream carried. */
  async function run(command: string, sid = SID): Promise<{ stdout: string; stderr: string; exitCode?: number; status?: string; started: boolean }> {
    const out = await client.send(new InvokeAgentRuntimeCommandCommand({ agentRuntimeArn: ARN, runtimeSessionId: sid, body: { command, timeout: 30 } }));
    const r = { stdout: '', stderr: '', exitCode: undefined as number | undefined, status: undefined as string | undefined, started: false };
    for await (const ev of out.stream ?? []) {
      if (ev.chunk?.contentStart) r.started = true;
      r.stdout += ev.chunk?.contentDelta?.stdout ?? '';
      r.stderr += ev.chunk?.contentDelta?.stderr ?? '';
      if (ev.chunk?.contentStop) {
        r.exitCode = ev.chunk.contentStop.exitCode;
        r.status = ev.chunk.contentStop.status;
      }
    }
    return r;
  }

  describe('InvokeAgentRuntimeCommandCommand', () => {
    it('should run the storage commands over a per-session file system', async () => {
      const b64 = Buffer.from('hello').toString('base64');
      expect(await run(`printf '%s' '${b64}' | base64 -d > '/mnt/data/h.txt'`)).toMatchObject({ exitCode: 0, status: 'COMPLETED', started: true });
      expect(await run(`printf '%s' '${Buffer.from(' you').toString('base64')}' | base64 -d >> '/mnt/data/h.txt'`)).toMatchObject({ exitCode: 0 });
      const read = await run("base64 -w 0 -- '/mnt/data/h.txt'");
      expect(Buffer.from(read.stdout, 'base64').toString()).toBe('hello you');
      const ls = await run("ls -lAn --time-style=+%s -- '/mnt/data'");
      expect(ls.stdout).toMatch(/^total \d+\n-rw-r--r-- 1 0 0 9 \d+ h\.txt\n$/);
      expect(await run("mv -f -- '/mnt/data/h.txt' '/mnt/data/g.txt'")).toMatchObject({ exitCode: 0 });
      expect(await run("rm -- '/mnt/data/g.txt'")).toMatchObject({ exitCode: 0 });
      expect(await run("rm -- '/mnt/data/g.txt'")).toMatchObject({ exitCode: 1, stderr: expect.stringContaining('No such file or directory') });
      expect(await run("base64 -w 0 -- '/mnt/data/g.txt'")).toMatchObject({ exitCode: 1, stderr: expect.stringContaining('No such file or directory') });
      const other = await run("ls -lAn --time-style=+%s -- '/mnt/data'", 'another-session-0123456789abcdef0123456789');
      expect(other).toMatchObject({ exitCode: 0, stdout: 'total 0\n' });
      const req = emu.requests.find((r) => r.operation === 'InvokeAgentRuntimeCommand')!;
      expect(req.auth.ok).toBe(true);
      expect(req.path).toBe(`/runtimes/${encodeURIComponent(ARN)}/commands`);
    });

    it('should exit 127 for a command it does not know', async () => {
      expect(await run('cat /etc/passwd')).toMatchObject({ exitCode: 127, stderr: expect.stringContaining('cat: not found') });
      expect(await run("ls -la '/mnt/data'")).toMatchObject({ exitCode: 127 });
    });

    it('should refuse a request without a valid runtime session id', async () => {
      await expect(run('rm -- x', 'short')).rejects.toMatchObject({ name: 'ValidationException' });
    });
  });
});
