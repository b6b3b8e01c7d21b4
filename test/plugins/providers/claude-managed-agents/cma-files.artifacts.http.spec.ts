import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { plainToInstance } from 'class-transformer';
import { readArtifact } from '../../../../src/core/artifacts/artifact-bytes.js';
import type { Artifacts } from '../../../../src/core/artifacts/artifacts.js';
import { isAgentRxError } from '../../../../src/core/errors.js';
import { HttpClientFactoryImpl } from '../../../../src/core/http/http-client-factory.js';
import { MemoryLogger } from '../../../../src/core/logger.js';
import type { AgentSpec } from '../../../../src/core/model.js';
import { CmaProviderOptionsClass } from '../../../../src/plugins/providers/claude-managed-agents/cma.config.js';
import { CmaAgentProvider } from '../../../../src/plugins/providers/claude-managed-agents/cma.provider.js';
import { startCmaEmulator, type CmaEmulator, type CmaEmulatorOptions } from '../../../../src/testing/cma-emulator.js';
import { API_KEY } from './cma-fixtures.js';

const spec: AgentSpec = { name: 'files', systemPrompt: 'Be brief.', tools: [] };

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('CmaArtifacts (Files API) over HTTP', () => {
  let emu: CmaEmulator | undefined;
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  async function setup(o: CmaEmulatorOptions = {}, overrides: Record<string, unknown> = {}): Promise<{ e: CmaEmulator; a: Artifacts; sessionId: string }> {
    const e = await startCmaEmulator({ apiKey: API_KEY, ...o });
    emu = e;
    const options = plainToInstance(
      CmaProviderOptionsClass,
      { apiKey: API_KEY, baseUrl: e.baseUrl, retryBaseMs: 1, ...overrides },
      { exposeDefaultValues: true },
    );
    const p = new CmaAgentProvider(options, new HttpClientFactoryImpl(), new MemoryLogger());
    const conn = await p.open({ spec, signal: new AbortController().signal });
    return { e, a: p.artifacts(conn.sessionId), sessionId: conn.sessionId };
  }

  const filesRequests = (e: CmaEmulator) => e.requests.filter((r) => r.path.startsWith('/v1/files') || r.path.endsWith('/resources'));

  describe('when a file is put, listed, fetched and deleted', () => {
    it('should round-trip it with the right betas and mount it at /data/<name>', async () => {
      const { e, a, sessionId } = await setup();
      const info = await a.put('report.txt', 'hello artifacts');
      expect(info).toEqual(expect.objectContaining({ name: 'report.txt', size: 15 }));
      expect(await a.list()).toEqual([expect.objectContaining({ name: 'report.txt', size: 15, id: info.id })]);
      expect((await readArtifact(a, 'report.txt')).toString()).toBe('hello artifacts');
      await a.delete('report.txt');
      expect(await a.list()).toEqual([]);

      const reqs = filesRequests(e);
      const upload = reqs.find((r) => r.method === 'POST' && r.path === '/v1/files')!;
      expect(upload.headers['anthropic-beta']).toBe('files-api-2025-04-14');
      expect(upload.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
      const attach = reqs.find((r) => r.method === 'POST' && r.path.endsWith('/resources'))!;
      expect(attach.body).toEqual({ type: 'file', file_id: info.id, mount_path: '/data/report.txt' });
      expect(attach.headers['anthropic-beta']).toContain('managed-agents-2026-04-01');
      const list = reqs.find((r) => r.method === 'GET' && r.path === '/v1/files')!;
      expect(list.query['scope_id']).toBe(sessionId);
      for (const r of reqs.filter((x) => x.path.startsWith('/v1/files') && !(x.method === 'POST'))) {
        expect(r.headers['anthropic-beta']).toBe('files-api-2025-04-14,managed-agents-2026-04-01');
      }
    });
  });

  describe('when the session holds outputs and duplicates', () => {
    it('should list outputs and resolve a repeated name to the newest file', async () => {
      const { e, a, sessionId } = await setup();
      e.writeOutput(sessionId, 'out.csv', 'a,b\n1,2\n');
      await a.put('notes.md', 'first');
      await a.put('notes.md', 'second, newer');
      const listed = await a.list();
      expect(listed.map((f) => [f.name, f.size])).toEqual([
        ['notes.md', 13],
        ['out.csv', 8],
      ]);
      expect((await readArtifact(a, 'notes.md')).toString()).toBe('second, newer');
      expect((await readArtifact(a, 'out.csv')).toString()).toBe('a,b\n1,2\n');
      await a.delete('notes.md');
      expect((await a.list()).map((f) => f.name)).toEqual(['out.csv']);
    });
  });

  describe('when the name is missing or unsafe', () => {
    it('should reject with not_found, and invalid_name before any request', async () => {
      const { e, a } = await setup();
      expect(isAgentRxError(await rejection(a.fetch('nope.txt')), 'not_found')).toBe(true);
      expect(isAgentRxError(await rejection(a.delete('nope.txt')), 'not_found')).toBe(true);
      const before = e.requests.length;
      for (const bad of ['', '.', '..', 'a/b', 'a\\b', 'x\u0000y', 'x\ny']) {
        expect(isAgentRxError(await rejection(a.put(bad, 'x')), 'invalid_name')).toBe(true);
        expect(isAgentRxError(await rejection(a.fetch(bad)), 'invalid_name')).toBe(true);
        expect(isAgentRxError(await rejection(a.delete(bad)), 'invalid_name')).toBe(true);
      }
      expect(e.requests.length).toBe(before);
    });
  });

  describe('when a 10 MB file is streamed', () => {
    it('should upload it from a stream and download it as a stream, byte for byte', async () => {
      const { a } = await setup();
      const chunk = Buffer.alloc(64 * 1024);
      const total = 10 * 1024 * 1024;
      const source = (): Readable =>
        Readable.from(
          (function* () {
            for (let i = 0; i < total / chunk.length; i++) {
              chunk.fill(i % 251);
              yield Buffer.from(chunk);
            }
          })(),
        );
      const want = createHash('sha256');
      for await (const c of source()) want.update(c as Buffer);
      let progress = 0;
      const info = await a.put('big.bin', source(), { size: total, onProgress: (n) => (progress = n) });
      expect(info.size).toBe(total);
      expect(progress).toBe(total);
      const { body, size } = await a.fetch('big.bin');
      expect(size).toBe(total);
      const got = createHash('sha256');
      for await (const c of body) got.update(c as Buffer);
      expect(got.digest('hex')).toBe(want.digest('hex'));
    });
  });

  describe('when a stream of unknown length is put', () => {
    it('should send it chunked and store every byte', async () => {
      const { e, a } = await setup();
      const info = await a.put(
        'chunked.txt',
        (async function* () {
          yield 'one,';
          yield Buffer.from('two,');
          yield 'three';
        })(),
      );
      expect(info.size).toBe(13);
      const upload = e.requests.find((r) => r.method === 'POST' && r.path === '/v1/files')!;
      expect(upload.headers['transfer-encoding']).toBe('chunked');
      expect((await readArtifact(a, 'chunked.txt')).toString()).toBe('one,two,three');
    });
  });

  describe('when the host misbehaves', () => {
    it('should reject a list without data as unexpected_response', async () => {
      const { a } = await setup({ faults: { files: { list: { 0: { kind: 'no_data' } } } } });
      const e = await rejection(a.list());
      expect(isAgentRxError(e, 'unexpected_response')).toBe(true);
    });

    it('should retry a 5xx and then fail with http_error', async () => {
      const fault = { kind: 'status', status: 503 } as const;
      const { e, a } = await setup({ faults: { files: { list: { 0: fault, 1: fault, 2: fault } } } }, { maxRetries: 2 });
      const err = await rejection(a.list());
      expect(isAgentRxError(err, 'http_error')).toBe(true);
      expect((err as { details: { status: number } }).details.status).toBe(503);
      expect(e.requests.filter((r) => r.path === '/v1/files').length).toBe(3);
    });

    it('should recover from a 5xx within the retries', async () => {
      const { a } = await setup({ faults: { files: { list: { 0: { kind: 'status', status: 500 } } } } });
      expect(await a.list()).toEqual([]);
    });

    it('should abort a download stalled mid-body when the signal fires', async () => {
      const { e, a } = await setup({ faults: { files: { download: { 0: { kind: 'slow', stallAfterBytes: 4, stallMs: 60_000 } } } } });
      await a.put('slow.txt', 'abcdefgh');
      const ctl = new AbortController();
      const { body } = await a.fetch('slow.txt', { signal: ctl.signal });
      const first = await new Promise<Buffer>((resolve) => body.once('data', resolve));
      expect(first.toString()).toBe('abcd');
      ctl.abort();
      const err = await new Promise<unknown>((resolve) => body.once('error', resolve));
      expect(isAgentRxError(err, 'cancelled')).toBe(true);
      await e.waitFor(() => e.requests.some((r) => r.path.endsWith('/content') && r.closed));
    });

    it('should give up on a download whose headers never come within requestTimeoutMs', async () => {
      const { a } = await setup({ faults: { files: { download: { 0: { kind: 'slow', headerDelayMs: 60_000 } } } } }, { requestTimeoutMs: 300, maxRetries: 0 });
      await a.put('late.txt', 'x');
      const err = await rejection(a.fetch('late.txt'));
      expect(isAgentRxError(err, 'http_error')).toBe(true);
      expect((err as Error).message).toMatch(/ETIMEDOUT|timeout/i);
    });
  });
});
