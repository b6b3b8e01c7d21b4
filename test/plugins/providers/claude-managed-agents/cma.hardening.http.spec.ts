import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { HttpClientFactoryImpl } from '../../../../src/core/http/http-client-factory.js';
import { MemoryLogger } from '../../../../src/core/logger.js';
import type { AgentSpec } from '../../../../src/core/model.js';
import type { StreamItem } from '../../../../src/core/plugin/agent-provider.js';
import { cmaApiOrigin, CmaProviderOptionsClass, DEFAULT_MAX_FRAME_BYTES } from '../../../../src/plugins/providers/claude-managed-agents/cma.config.js';
import { CmaAgentProvider } from '../../../../src/plugins/providers/claude-managed-agents/cma.provider.js';
import { startCmaEmulator, type CmaEmulator, type CmaEmulatorOptions } from '../../../../src/testing/cma-emulator.js';
import { failure } from '../../../fakes/failure.js';
import { API_KEY, createCmaRx } from './cma-fixtures.js';

const spec: AgentSpec = {
  name: 'helper',
  systemPrompt: 'Be brief.',
  tools: [{ name: 'echo', description: 'Echo.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }],
};
const signal = (): AbortSignal => new AbortController().signal;

describe('CmaAgentProvider hardening (issue 16)', () => {
  let emu: CmaEmulator | undefined;
  let logger: MemoryLogger;
  beforeEach(() => (logger = new MemoryLogger()));
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  async function start(o: CmaEmulatorOptions = {}): Promise<CmaEmulator> {
    emu = await startCmaEmulator({ apiKey: API_KEY, heartbeatMs: 0, ...o });
    return emu;
  }

  function provider(e: CmaEmulator, overrides: Record<string, unknown> = {}): CmaAgentProvider {
    const options = plainToInstance(
      CmaProviderOptionsClass,
      { apiKey: API_KEY, baseUrl: e.baseUrl, retryBaseMs: 1, ...overrides },
      { exposeDefaultValues: true },
    );
    return new CmaAgentProvider(options, new HttpClientFactoryImpl(), logger);
  }

  const posts = (e: CmaEmulator, path: RegExp): { path: string; status: number }[] =>
    e.requests.filter((r) => r.method === 'POST' && path.test(r.path)).map((r) => ({ path: r.path, status: r.status }));

  describe('.provision when creating the agent fails after the environment was created', () => {
    it('should archive the environment it created and reject with the agent error, marked rolled back', async () => {
      const e = await start({ faults: { createFaults: { agents: { 0: { kind: 'status', status: 400 } } } } });
      const err = await failure(provider(e).provision(spec, signal()));
      expect(err).toMatchObject({ code: 'http_error', details: { status: 400, rolledBack: true } });
      expect(err.message).toContain('POST /v1/agents failed with 400');
      const [env] = [...e.environments.values()];
      expect(env!['archived_at']).not.toBeNull();
      expect(posts(e, /archive$/)).toEqual([{ path: `/v1/environments/${String(env!['id'])}/archive`, status: 200 }]);
      // Rolled back to nothing: provisioning again starts over and creates a fresh environment.
      const handle = await provider(e).provision(spec, signal());
      expect(handle.provisioned).toEqual({ agent: true, environment: true });
      expect(handle.environmentId).not.toBe(env!['id']);
    });

    it('should report both failures when archiving the environment fails too', async () => {
      const e = await start({
        faults: { createFaults: { agents: { 0: { kind: 'status', status: 400 } } }, archiveFaults: { environments: { 0: { kind: 'status', status: 403 } } } },
      });
      const err = await failure(provider(e).provision(spec, signal()));
      const [env] = [...e.environments.values()];
      expect(err).toMatchObject({
        code: 'http_error',
        details: { status: 400, rolledBack: false, environmentId: env!['id'], rollbackError: expect.stringContaining('403') },
      });
      expect(err.message).toContain('POST /v1/agents failed with 400');
      expect(err.message).toContain(`rolling back also failed: the environment "${String(env!['name'])}" (${String(env!['id'])})`);
      expect(env!['archived_at']).toBeNull();
      expect(logger.lines.some((l) => l.level === 'warn' && JSON.stringify(l).includes('archiving the environment'))).toBe(true);
      expect(JSON.stringify([err.message, err.details, logger.lines])).not.toContain(API_KEY);
    });

    it('should leave a configured environment alone', async () => {
      const e = await start({ faults: { createFaults: { agents: { 0: { kind: 'status', status: 400 } } } } });
      const err = await failure(provider(e, { environmentId: 'env_configured' }).provision(spec, signal()));
      expect(err).toMatchObject({ code: 'http_error', details: { status: 400 } });
      expect(err.details?.['rolledBack']).toBeUndefined();
      expect(posts(e, /archive$/)).toEqual([]);
    });
  });

  describe('baseUrl', () => {
    it('should normalize a trailing /v1 or /v1/ away (the request paths carry /v1)', () => {
      expect(cmaApiOrigin('https://api.anthropic.com')).toBe('https://api.anthropic.com');
      expect(cmaApiOrigin('https://api.anthropic.com/')).toBe('https://api.anthropic.com');
      expect(cmaApiOrigin('https://api.anthropic.com/v1')).toBe('https://api.anthropic.com');
      expect(cmaApiOrigin('https://api.anthropic.com/v1/')).toBe('https://api.anthropic.com');
      expect(cmaApiOrigin('https://gateway.example/anthropic/v1')).toBe('https://gateway.example/anthropic');
    });

    it.each(['/v1', '/v1/', '/'])('should reach the service with a base URL ending in %s', async (suffix) => {
      const e = await start();
      const handle = await provider(e, { baseUrl: `${e.baseUrl}${suffix}` }).provision(spec, signal());
      expect(handle.provisioned).toEqual({ agent: true, environment: true });
      expect(e.requests.map((r) => r.path)).toEqual(['/v1/environments', '/v1/agents']);
    });
  });

  describe('maxFrameBytes', () => {
    it('should default to 8 MiB and refuse less than 1 KiB', () => {
      const o = plainToInstance(CmaProviderOptionsClass, { apiKey: API_KEY }, { exposeDefaultValues: true });
      expect(o.maxFrameBytes).toBe(DEFAULT_MAX_FRAME_BYTES);
      expect(DEFAULT_MAX_FRAME_BYTES).toBe(8 * 1024 * 1024);
      const bad = plainToInstance(CmaProviderOptionsClass, { apiKey: API_KEY, maxFrameBytes: 10 }, { exposeDefaultValues: true });
      expect(validateSync(bad).map((x) => x.property)).toEqual(['maxFrameBytes']);
    });

    it('should fail the stream with stream_error naming the limit when a frame never ends, long before the idle timeout', async () => {
      const maxFrameBytes = 64 * 1024;
      const e = await start({ script: [{ text: 'never seen' }], faults: { unboundedFrame: { before: 1, bytes: 4 * 1024 * 1024 } } });
      const p = provider(e, { maxFrameBytes, streamIdleTimeoutMs: 600_000 });
      const handle = await p.provision(spec, signal());
      const conn = await p.open({ spec, handle, signal: signal() });
      const items: StreamItem[] = [];
      const ended = new Promise<unknown>((resolve) => {
        p.stream(conn).subscribe({ next: (i) => items.push(i), error: resolve, complete: () => resolve(undefined) });
      });
      await e.waitFor(() => e.sessions.get(conn.sessionId)!.openStreams === 1);
      await p.pushInput(conn, p.userInput('hello'), signal());
      const err = await failure(ended.then((x) => Promise.reject(x)));
      expect(err.code).toBe('stream_error');
      expect(err.message).toMatch(/^an SSE frame exceeded maxFrameBytes \(65536 bytes\); /);
      expect(err.details).toMatchObject({ maxFrameBytes, oversized: true });
      expect(items).toEqual([{ kind: 'open' }]);
      // The client hung up: the emulator's stream request is closed, not left to buffer forever.
      await e.waitFor(() => e.sessions.get(conn.sessionId)!.openStreams === 0);
      const stream = e.requests.find((r) => r.path.endsWith('/events/stream'))!;
      expect(stream.clientAborted).toBe(true);
    });

    it('should let a run recover through the normal reconnect when one frame is oversized', async () => {
      const e = await startCmaEmulator({
        script: [{ text: 'hello ', toolUses: [{ id: 'toolu_1', name: 'echo', input: { text: 'x' } }] }, { text: 'done' }],
        faults: { unboundedFrame: { before: 3, bytes: 1024 * 1024 } },
        heartbeatMs: 0,
      });
      emu = e;
      const rx = await createCmaRx(e, { section: { maxFrameBytes: 32 * 1024, streamIdleTimeoutMs: 600_000 } });
      try {
        const result = await rx.run({ prompt: 'go' });
        expect(result).toMatchObject({ terminal: 'end_turn' });
        expect(result.text).toContain('done');
        expect(e.requests.filter((r) => r.path.endsWith('/events/stream')).length).toBeGreaterThanOrEqual(2);
        expect(e.sessions.get(result.sessionId!)!.received.filter((r) => r['type'] === 'user.custom_tool_result')).toHaveLength(1);
      } finally {
        await rx.stop();
      }
    });
  });
});
