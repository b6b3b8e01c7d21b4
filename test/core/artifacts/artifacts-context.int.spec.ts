import { AgentRx } from '../../../src/agentrx.js';
import { readArtifact } from '../../../src/core/artifacts/artifact-bytes.js';
import { isAgentRxError } from '../../../src/core/errors.js';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import { cmaProviderModule } from '../../../src/plugins/providers/claude-managed-agents/cma.module.js';
import { startCmaEmulator, type CmaEmulator } from '../../../src/testing/cma-emulator.js';

const KEY = 'sk-ant-artifacts-context-key';

describe('artifacts through the session and the facade', () => {
  let emu: CmaEmulator;
  let rx: AgentRx | undefined;
  afterEach(async () => {
    await rx?.stop();
    rx = undefined;
    await emu.close();
  });

  describe('when a tool of a Claude Managed Agents session saves a file', () => {
    it('should reach the session artifacts through ctx.artifacts, and the facade should list it', async () => {
      emu = await startCmaEmulator({
        apiKey: KEY,
        script: [{ toolUses: [{ id: 'toolu_save', name: 'save_note', input: { text: 'from the tool' } }] }, { text: 'Saved.' }],
      });
      let seen: string | undefined;
      const saveNote = defineTool<{ text: string }>({
        name: 'save_note',
        description: 'Saves a note as an artifact of the session.',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        handle: async (input, ctx) => {
          seen = ctx.artifacts?.sessionId;
          const info = await ctx.artifacts!.put('note.txt', input.text, { signal: ctx.signal });
          return `saved ${info.name}`;
        },
      });
      rx = await AgentRx.create({
        modules: [cmaProviderModule],
        tools: [saveNote],
        config: {
          provider: 'claude-managed-agents',
          logLevel: 'silent',
          consumers: { terminal: false },
          providers: { 'claude-managed-agents': { apiKey: KEY, baseUrl: emu.baseUrl, retryBaseMs: 1 } },
        },
      });
      const result = await rx.run({ prompt: 'Save a note.' });
      expect(result.sessionId).toBeDefined();
      expect(seen).toBe(result.sessionId);
      const artifacts = rx.artifacts(result.sessionId!);
      expect((await artifacts.list()).map((f) => f.name)).toEqual(['note.txt']);
      expect((await readArtifact(artifacts, 'note.txt')).toString()).toBe('from the tool');
    });
  });

  describe('when the provider has no session storage', () => {
    it('should throw unsupported naming the provider', async () => {
      emu = await startCmaEmulator({ apiKey: KEY });
      rx = await AgentRx.create({ config: { provider: 'local', logLevel: 'silent', consumers: { terminal: false } } });
      let err: unknown;
      try {
        rx.artifacts('any-session');
      } catch (e) {
        err = e;
      }
      expect(isAgentRxError(err, 'unsupported')).toBe(true);
      expect((err as Error).message).toContain('local');
    });
  });
});
