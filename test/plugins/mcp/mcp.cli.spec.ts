import { jest } from '@jest/globals';
import { AgentRx } from '../../../src/agentrx.js';
import { listTools, summarizeSchema, toolRows } from '../../../src/cli/commands/tools.action.js';
import { parseMcpFlag, withMcpFlags } from '../../../src/cli/mcp-flags.js';
import { isAgentRxError } from '../../../src/core/errors.js';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import { mcpModule } from '../../../src/plugins/mcp/mcp.module.js';
import { demoToolsModule } from '../../../src/plugins/tools/tools.module.js';
import { EVERYTHING } from './mcp-helpers.js';

jest.setTimeout(30_000);

describe('cli/mcp', () => {
  describe('parseMcpFlag', () => {
    describe('when the value is <name>=<command line> with quotes and escapes', () => {
      it('should split it into a command and args like a shell, without expansion', () => {
        expect(parseMcpFlag(`files=npx -y "@modelcontextprotocol/server-filesystem" '/tmp/my docs' a\\ b $HOME`)).toEqual({
          name: 'files',
          server: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp/my docs', 'a b', '$HOME'] },
        });
      });
    });

    describe('when the value is malformed', () => {
      it('should say what is wrong for each case', () => {
        const messages = ['npx server', 'bad_name=npx x', 'x=', "x=npx 'open"].map((v) => {
          try {
            parseMcpFlag(v);
            return 'accepted';
          } catch (e) {
            return isAgentRxError(e, 'invalid_options') ? e.message : String(e);
          }
        });
        expect(messages[0]).toMatch(/expected <name>=<command …>/);
        expect(messages[1]).toMatch(/expected <name>=<command …> with a name of letters, digits and "-"/);
        expect(messages[2]).toBe('--mcp x: no command after "="');
        expect(messages[3]).toBe("--mcp x: unterminated ' quote in the command");
      });
    });
  });

  describe('withMcpFlags', () => {
    describe('when flags are repeated and the config has servers', () => {
      it('should add each flag as a server, keeping the config', () => {
        const config = { provider: 'local', mcp: { servers: { remote: { url: 'http://127.0.0.1:1/mcp' } } } };
        expect(withMcpFlags(config, ['a=node a.js', 'b=node b.js --x'])).toEqual({
          provider: 'local',
          mcp: {
            servers: { remote: { url: 'http://127.0.0.1:1/mcp' }, a: { command: 'node', args: ['a.js'] }, b: { command: 'node', args: ['b.js', '--x'] } },
          },
        });
        expect(config.mcp.servers).toEqual({ remote: { url: 'http://127.0.0.1:1/mcp' } });
      });
    });

    describe('when a flag reuses a name', () => {
      it('should refuse it', () => {
        expect(() => withMcpFlags({}, ['a=node a.js', 'a=node b.js'])).toThrow("--mcp a: a server named 'a' is already configured; pick another name");
        expect(() => withMcpFlags({ mcp: { servers: { a: { command: 'x' } } } }, ['a=node a.js'])).toThrow(
          "--mcp a: a server named 'a' is already configured; pick another name",
        );
        expect(() => withMcpFlags({ mcp: { servers: { a: { url: 'http://127.0.0.1:1/mcp' } } } }, ['a=node a.js'])).toThrow(
          "--mcp a: a server named 'a' is already configured; pick another name",
        );
        expect(() => withMcpFlags({ mcp: { servers: { a: { startTimeoutMs: 1 } } } }, ['a=node a.js', 'a=node b.js'])).toThrow(
          "--mcp a: a server named 'a' is already configured; pick another name",
        );
      });
    });

    describe('when the config has options but no command for the flag’s server', () => {
      it('should add the flag’s command to those options', () => {
        const config = { mcp: { servers: { files: { startTimeoutMs: 180_000, deny: ['write_file'] } } } };
        expect(withMcpFlags(config, ['files=npx -y @modelcontextprotocol/server-filesystem .'])).toEqual({
          mcp: {
            servers: { files: { startTimeoutMs: 180_000, deny: ['write_file'], command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] } },
          },
        });
        expect(config.mcp.servers.files).toEqual({ startTimeoutMs: 180_000, deny: ['write_file'] });
      });
    });
  });

  describe('summarizeSchema', () => {
    it('should give one line with optional marks, arrays, enums and unions', () => {
      expect(
        summarizeSchema({
          type: 'object',
          properties: {
            q: { type: 'string' },
            tags: { type: 'array', items: { type: 'string' } },
            mode: { enum: ['a', 'b'] },
            n: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
          },
          required: ['q'],
        }),
      ).toBe('q: string, tags?: string[], mode?: "a"|"b", n?: integer|null');
      expect(summarizeSchema({ type: 'object' })).toBe('(none)');
    });
  });

  describe('listTools', () => {
    let rx: AgentRx | undefined;
    afterEach(async () => {
      await rx?.stop();
      rx = undefined;
    });

    describe('when the instance has class tools, a schema tool and an MCP server', () => {
      it('should list every tool with its source, description and input', async () => {
        const lookup = defineTool({
          name: 'lookup',
          description: 'Looks a word up.',
          inputSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
          requireApproval: true,
          handle: () => '',
        });
        rx = await AgentRx.create({
          config: withMcpFlags(
            {
              providers: { local: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } },
              mcp: { servers: { everything: { command: process.execPath, args: [EVERYTHING], allow: ['echo', 'get-sum'] } } },
            },
            [],
          ),
          modules: [demoToolsModule, mcpModule],
          tools: [lookup],
        });
        const rows = toolRows(rx);
        expect(rows.map((r) => [r.name, r.source])).toEqual([
          ['calculate', 'class'],
          ['everything__echo', 'mcp:everything'],
          ['everything__get-sum', 'mcp:everything'],
          ['get_time', 'class'],
          ['lookup', 'schema'],
          ['read_file', 'class'],
        ]);
        const text = listTools(rx);
        expect(text).toContain('everything__echo  [mcp:everything]\n  Echoes back the input string\n  input: message: string\n');
        expect(text).toContain('lookup  [schema, requires approval]\n  Looks a word up.\n  input: word: string\n');
        const json = listTools(rx, { json: true })
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { name: string; inputSchema: unknown });
        expect(json.find((r) => r.name === 'everything__get-sum')?.inputSchema).toMatchObject({ properties: { a: { type: 'number' }, b: { type: 'number' } } });
      });
    });
  });
});
