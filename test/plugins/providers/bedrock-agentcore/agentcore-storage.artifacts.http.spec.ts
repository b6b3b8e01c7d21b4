import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { readArtifact } from '../../../../src/core/artifacts/artifact-bytes.js';
import type { Artifacts } from '../../../../src/core/artifacts/artifacts.js';
import { isAgentRxError } from '../../../../src/core/errors.js';
import { createDataClient } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore-clients.js';
import { loadDataSdk } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore-sdk.js';
import { AGENTCORE_MAX_COMMAND_CHARS, AgentCoreArtifacts } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore-storage.js';
import { newRuntimeSessionId } from '../../../../src/plugins/providers/bedrock-agentcore/runtime-session-id.js';
import { startAgentCoreEmulator, type AgentCoreEmulator } from '../../../../src/testing/agentcore-emulator.js';
import { CREDS, HARNESS_ARN, REGION, emulatorOptions, makeProvider } from './helpers.js';

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

const commandsOf = (e: AgentCoreEmulator): string[] =>
  e.requests.filter((r) => r.operation === 'InvokeAgentRuntimeCommand').map((r) => String((r.body as { command?: unknown }).command));

describe('AgentCoreArtifacts (session storage commands) over HTTP', () => {
  let emu: AgentCoreEmulator;
  let sessionId: string;
  beforeEach(async () => {
    emu = await startAgentCoreEmulator({ credentials: CREDS, region: REGION });
    sessionId = newRuntimeSessionId();
  });
  afterEach(() => emu.close());

  const artifacts = (extra: Record<string, unknown> = {}): Artifacts => makeProvider(emu, extra).provider.artifacts(sessionId);

  describe('when a file is put, listed, fetched and deleted', () => {
    it('should round-trip it through the storage folder with signed commands', async () => {
      const a = artifacts();
      const info = await a.put('report.txt', 'hello storage');
      expect(info).toEqual(expect.objectContaining({ name: 'report.txt', size: 13 }));
      expect(await a.list()).toEqual([expect.objectContaining({ name: 'report.txt', size: 13 })]);
      expect((await readArtifact(a, 'report.txt')).toString()).toBe('hello storage');
      await a.delete('report.txt');
      expect(await a.list()).toEqual([]);

      const cmds = commandsOf(emu);
      expect(cmds[0]).toBe(`printf '%s' '${Buffer.from('hello storage').toString('base64')}' | base64 -d > '/mnt/data/.report.txt.agentrx-part'`);
      expect(cmds[1]).toBe("mv -f -- '/mnt/data/.report.txt.agentrx-part' '/mnt/data/report.txt'");
      expect(cmds).toContain("ls -lAn --time-style=+%s -- '/mnt/data'");
      expect(cmds).toContain("base64 -w 0 -- '/mnt/data/report.txt'");
      expect(cmds).toContain("rm -- '/mnt/data/report.txt'");
      const req = emu.requests.find((r) => r.operation === 'InvokeAgentRuntimeCommand')!;
      expect(req.path).toBe(`/runtimes/${encodeURIComponent(HARNESS_ARN)}/commands`);
      expect(req.runtimeSessionId).toBe(sessionId);
      expect(req.auth.ok).toBe(true);
      expect((req.body as { timeout: number }).timeout).toBeGreaterThan(0);
    });

    it('should use the configured sessionStoragePath and overwrite a name with the newest content', async () => {
      const a = artifacts({ sessionStoragePath: '/mnt/work' });
      await a.put('n.md', 'first');
      await a.put('n.md', 'second');
      expect((await a.list()).map((f) => [f.name, f.size])).toEqual([['n.md', 6]]);
      expect((await readArtifact(a, 'n.md')).toString()).toBe('second');
      expect(commandsOf(emu)).toContain("ls -lAn --time-style=+%s -- '/mnt/work'");
    });
  });

  describe('when content spans several chunks', () => {
    it('should append base64 chunks and read them back whole', async () => {
      const options = emulatorOptions(emu);
      const a = new AgentCoreArtifacts(async () => ({ client: await createDataClient(options), sdk: await loadDataSdk() }), {
        folder: '/mnt/data',
        harnessArn: HARNESS_ARN,
        runtimeSessionId: sessionId,
        timeoutSeconds: 30,
        maxRetries: 0,
        retryBaseMs: 1,
        chunkBytes: 4,
      });
      await a.put('chunks.bin', Readable.from([Buffer.from('abcdefghij')]));
      const writes = commandsOf(emu).filter((c) => c.startsWith('printf'));
      expect(writes.map((c) => c.includes('>>'))).toEqual([false, true, true]);
      expect((await readArtifact(a, 'chunks.bin')).toString()).toBe('abcdefghij');
    });
  });

  describe('when the name is missing or unsafe', () => {
    it('should reject with not_found, and invalid_name before any command', async () => {
      const a = artifacts();
      expect(isAgentRxError(await rejection(a.fetch('nope.txt')), 'not_found')).toBe(true);
      expect(isAgentRxError(await rejection(a.delete('nope.txt')), 'not_found')).toBe(true);
      const before = emu.requests.length;
      for (const bad of ['', '.', '..', 'a/b', "it's", 'a b', '$(id)', 'x;rm', 'é']) {
        expect(isAgentRxError(await rejection(a.put(bad, 'x')), 'invalid_name')).toBe(true);
        expect(isAgentRxError(await rejection(a.fetch(bad)), 'invalid_name')).toBe(true);
        expect(isAgentRxError(await rejection(a.delete(bad)), 'invalid_name')).toBe(true);
      }
      expect(emu.requests.length).toBe(before);
    });
  });

  describe('when a 10 MB file is streamed', () => {
    it('should write it in commands under the cap and stream it back byte for byte', async () => {
      const a = artifacts();
      const total = 10 * 1024 * 1024;
      const piece = 256 * 1024;
      const source = (): Readable =>
        Readable.from(
          (function* () {
            for (let i = 0; i < total / piece; i++) yield Buffer.alloc(piece, i % 251);
          })(),
        );
      const want = createHash('sha256');
      for await (const c of source()) want.update(c as Buffer);
      let progress = 0;
      const info = await a.put('big.bin', source(), { onProgress: (n) => (progress = n) });
      expect(info.size).toBe(total);
      expect(progress).toBe(total);
      expect(Math.max(...commandsOf(emu).map((c) => c.length))).toBeLessThanOrEqual(AGENTCORE_MAX_COMMAND_CHARS);
      const { body, size } = await a.fetch('big.bin');
      expect(size).toBe(total);
      const got = createHash('sha256');
      for await (const c of body) got.update(c as Buffer);
      expect(got.digest('hex')).toBe(want.digest('hex'));
    }, 60_000);
  });

  describe('when the signal fires before a call', () => {
    it('should reject with cancelled', async () => {
      const ctl = new AbortController();
      ctl.abort();
      expect(isAgentRxError(await rejection(artifacts().list({ signal: ctl.signal })), 'cancelled')).toBe(true);
    });
  });
});
