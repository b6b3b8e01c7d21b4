import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { startCmaEmulator, type CmaEmulator } from '../../src/testing/cma-emulator.js';

const KEY = 'sk-ant-files-conformance-key';
const FILES = ['files-api-2025-04-14' as const];
const BOTH = ['files-api-2025-04-14' as const, 'managed-agents-2026-04-01' as const];

describe('the CMA emulator Files API with @anthropic-ai/sdk', () => {
  let emu: CmaEmulator;
  let client: Anthropic;
  beforeEach(async () => {
    emu = await startCmaEmulator({ apiKey: KEY });
    client = new Anthropic({ apiKey: KEY, baseURL: emu.baseUrl, maxRetries: 0, defaultQuery: { beta: 'true' } });
  });
  afterEach(() => emu.close());

  describe('client.beta.files upload, retrieveMetadata, list, download and delete', () => {
    it('should accept every answer of the emulator', async () => {
      const uploaded = await client.beta.files.upload({ file: await toFile(Buffer.from('sdk bytes'), 'sdk.txt', { type: 'text/plain' }), betas: FILES });
      expect(uploaded).toMatchObject({ id: expect.stringMatching(/^file_/), type: 'file', filename: 'sdk.txt', mime_type: 'text/plain', size_bytes: 9 });
      expect(await client.beta.files.retrieveMetadata(uploaded.id, { betas: BOTH })).toMatchObject({ id: uploaded.id, filename: 'sdk.txt' });

      const listed = [];
      for await (const f of client.beta.files.list({ betas: BOTH, limit: 1 })) listed.push(f);
      expect(listed.map((f) => f.id)).toEqual([uploaded.id]);

      const content = await client.beta.files.download(uploaded.id, { betas: BOTH });
      expect(Buffer.from(await content.arrayBuffer()).toString()).toBe('sdk bytes');

      expect(await client.beta.files.delete(uploaded.id, { betas: BOTH })).toEqual({ id: uploaded.id, type: 'file_deleted' });
      const after = [];
      for await (const f of client.beta.files.list({ betas: BOTH })) after.push(f);
      expect(after).toEqual([]);
    });
  });

  describe('a session-scoped listing across pages and a mounted file', () => {
    it('should list the outputs of the session only, page by page, and attach a file as a resource', async () => {
      const environment = await client.beta.environments.create({ name: 'files', config: { type: 'cloud', networking: { type: 'unrestricted' } } });
      const agent = await client.beta.agents.create({ name: 'files', model: 'claude-sonnet-4-5' });
      const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
      const outs = ['a.txt', 'b.txt', 'c.txt'].map((n) => emu.writeOutput(session.id, n, n));
      const other = await client.beta.files.upload({ file: await toFile(Buffer.from('input'), 'in.txt'), betas: FILES });

      const scoped = [];
      for await (const f of client.beta.files.list({ betas: BOTH, scope_id: session.id, limit: 2 })) scoped.push(f);
      expect(scoped.map((f) => f.id)).toEqual(outs);
      expect(scoped[0]!.scope).toEqual({ id: session.id, type: 'session' });

      const resource = await client.beta.sessions.resources.add(session.id, { type: 'file', file_id: other.id, mount_path: '/data/in.txt' });
      expect(resource).toMatchObject({ type: 'file', file_id: other.id, mount_path: '/data/in.txt' });
      const resources = [];
      for await (const r of client.beta.sessions.resources.list(session.id)) resources.push(r);
      expect(resources.map((r) => ('id' in r ? r.id : undefined))).toEqual([resource.id]);
      expect(await client.beta.sessions.resources.delete(resource.id, { session_id: session.id })).toEqual({
        id: resource.id,
        type: 'session_resource_deleted',
      });
    });
  });

  describe('when the beta header is missing', () => {
    it('should answer 400 like the service', async () => {
      await expect(client.beta.files.list()).rejects.toMatchObject({ status: 400 });
    });
  });
});
