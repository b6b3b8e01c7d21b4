import { validateConfig } from '../../../src/core/config/load-config.js';
import { isAgentRxError } from '../../../src/core/errors.js';
import { mcpConfigSection, McpServerOptions, type McpOptions } from '../../../src/plugins/mcp/mcp.config.js';

function problems(mcp: unknown): string {
  try {
    validateConfig({ mcp }, [mcpConfigSection]);
  } catch (e) {
    if (isAgentRxError(e, 'invalid_config')) return e.message;
    throw e;
  }
  throw new Error('the config was accepted');
}

describe('mcpConfigSection', () => {
  describe('when several servers are wrong in several ways', () => {
    it('should list every problem in one invalid_config, never showing env or header values', () => {
      const message = problems({
        servers: {
          bad_name: { command: 'x' },
          both: { command: 'node', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer hunter2' } },
          neither: {},
          notObject: 'npx server',
          httpWithEnv: { url: 'http://127.0.0.1:1/mcp', env: { TOKEN: 'sekrit' }, args: ['x'] },
          badTypes: { command: 'x', args: 'a b', allow: [1], requireApproval: 'yes', startTimeoutMs: 5, typo: true },
          badUrl: { url: 'ftp://example.com' },
        },
      });
      const lines = message.split('\n').slice(1);
      expect(lines).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^- mcp\.servers\.bad_name\.name: server names must match/),
          expect.stringMatching(/^- mcp\.servers\.both\.url: is only for Streamable HTTP servers, and this one has command/),
          expect.stringMatching(/^- mcp\.servers\.both\.headers: is only for Streamable HTTP servers.*got \{"Authorization":"\[redacted\]"\}/),
          expect.stringMatching(/^- mcp\.servers\.neither\.command: is required/),
          expect.stringMatching(/^- mcp\.servers\.notObject: must be an object/),
          expect.stringMatching(/^- mcp\.servers\.httpWithEnv\.env: is only for stdio servers/),
          expect.stringMatching(/^- mcp\.servers\.httpWithEnv\.args: is only for stdio servers/),
          expect.stringMatching(/^- mcp\.servers\.badTypes\.args: /),
          expect.stringMatching(/^- mcp\.servers\.badTypes\.allow: /),
          expect.stringMatching(/^- mcp\.servers\.badTypes\.requireApproval: must be true, false or an array of tool names/),
          expect.stringMatching(/^- mcp\.servers\.badTypes\.startTimeoutMs: /),
          expect.stringMatching(/^- mcp\.servers\.badTypes\.typo: unknown key/),
          expect.stringMatching(/^- mcp\.servers\.badUrl\.url: /),
        ]),
      );
      expect(lines).toHaveLength(13);
      expect(message).not.toContain('hunter2');
      expect(message).not.toContain('sekrit');
    });
  });

  describe('when servers is not an object', () => {
    it('should say what it must be', () => {
      expect(problems({ servers: ['a'] })).toMatch(/- mcp\.servers: must be an object of server name → server options; got \["a"\]/);
    });
  });

  describe('when the config is valid', () => {
    it('should give a Map of server options with defaults, env and header values as Secrets', () => {
      const { sections } = validateConfig(
        {
          mcp: {
            servers: {
              files: { command: 'npx', args: ['-y', 'fs'], env: { TOKEN: 'sekrit' } },
              remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer t' }, requireApproval: true },
            },
          },
        },
        [mcpConfigSection],
      );
      const options = sections.get('mcp') as McpOptions;
      const files = options.servers.get('files')!;
      expect(files).toBeInstanceOf(McpServerOptions);
      expect(files).toMatchObject({ name: 'files', command: 'npx', args: ['-y', 'fs'], startTimeoutMs: 60_000, maxRestarts: 5 });
      expect(files.env!.TOKEN!.reveal()).toBe('sekrit');
      expect(JSON.stringify(files)).not.toContain('sekrit');
      expect(options.servers.get('remote')!.headers!.Authorization!.reveal()).toBe('Bearer t');
    });
  });
});
