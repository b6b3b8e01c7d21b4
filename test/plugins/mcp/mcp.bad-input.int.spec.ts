import { jest } from '@jest/globals';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAgentRxError } from '../../../src/core/errors.js';
import { McpToolSource } from '../../../src/plugins/mcp/mcp.source.js';
import { tempDirSync } from '../../support/temp-dir.js';
import { RecordingLogger, callTool, mcpOptions, nodeServer } from './mcp-helpers.js';

const DYNAMIC = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'dynamic-server.mjs');

/** How much of a server's stderr a start-up error keeps (mcp-server.ts). */
const TAIL_CHARS = 2_000;

jest.setTimeout(30_000);

describe('McpToolSource with bad input', () => {
  let source: McpToolSource | undefined;
  let logger: RecordingLogger;

  beforeEach(() => {
    logger = new RecordingLogger();
  });

  afterEach(async () => {
    await source?.stop();
    source = undefined;
  });

  async function startFailure(servers: Record<string, unknown>): Promise<Error> {
    const s = new McpToolSource(logger, mcpOptions(servers), undefined);
    try {
      await s.start();
    } catch (e) {
      return e as Error;
    } finally {
      await s.stop();
    }
    throw new Error('start did not fail');
  }

  describe('.start', () => {
    describe('when a secret in the stderr straddles the start of the kept tail', () => {
      it('should show no part of it', async () => {
        const secret = 'sekrit-value-1234567890';
        // After the secret: 1,990 characters and the newline, so the last 2,000 hold its last 9 characters.
        const script = `process.stderr.write('start ' + process.env.API_TOKEN + 'x'.repeat(${TAIL_CHARS - 10}) + '\\n'); process.exit(3)`;
        const err = await startFailure({ leaky: { command: process.execPath, args: ['-e', script], env: { API_TOKEN: secret } } });
        expect(err.message).toMatch(/^MCP server leaky could not be started: .*; its stderr ended with:\n/);
        const tail = err.message.slice(err.message.indexOf('ended with:\n') + 'ended with:\n'.length);
        expect(tail.length).toBeLessThanOrEqual(TAIL_CHARS);
        expect(tail).toMatch(/x{1000}$/);
        for (let k = 3; k <= secret.length; k++) expect(err.message).not.toContain(secret.slice(secret.length - k));
      });
    });

    describe('when the cwd of a stdio server does not exist', () => {
      it('should say so, naming the cwd, not that the command was not found', async () => {
        const cwd = join(tempDirSync('agentrx-mcp-'), 'no-such-folder');
        const err = await startFailure({ lost: { command: process.execPath, args: ['-e', '0'], cwd } });
        expect(isAgentRxError(err, 'invalid_config')).toBe(true);
        expect(err.message).toBe(`MCP server lost cannot be started: its cwd '${cwd}' does not exist or is not a folder (mcp.servers.lost.cwd)`);
      });
    });

    describe('when the server lists a tool whose input schema is not an object schema', () => {
      it('should start, leave that tool out with a warning naming it, and keep the others', async () => {
        const shout = { name: 'shout', description: 'Takes a bare string.', inputSchema: { type: 'string' } };
        source = new McpToolSource(logger, mcpOptions({ dyn: nodeServer(DYNAMIC, JSON.stringify([shout])) }), undefined);
        await source.start();
        expect(source.tools().map((t) => t.name)).toEqual(['dyn__add_tool', 'dyn__remove_tool', 'dyn__fail']);
        expect(logger.lines.join('\n')).toMatch(/warn MCP server dyn: tool 'shout' is left out: .*inputSchema\.type/);
        expect(await callTool(source.tools(), 'dyn__fail', {})).toMatchObject({ isError: true, content: 'the widget is broken' });
      });
    });
  });
});
