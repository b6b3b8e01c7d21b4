import { jest } from '@jest/globals';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentRx } from '../../../src/agentrx.js';
import { ContainerModule } from '../../../src/core/util/inversify.js';
import { isAgentRxError } from '../../../src/core/errors.js';
import { Logger } from '../../../src/core/logger.js';
import { ToolRegistryImpl } from '../../../src/core/tools/tool-registry.js';
import { DEFAULT_MCP_START_TIMEOUT_MS } from '../../../src/plugins/mcp/mcp.config.js';
import { mcpModule } from '../../../src/plugins/mcp/mcp.module.js';
import { MCP_START_MARGIN_MS, McpToolSource } from '../../../src/plugins/mcp/mcp.source.js';
import { formatMcpProgress, mcpProgressModule, type McpProgressEvent, type McpProgressOptions } from '../../../src/plugins/mcp/mcp-progress.js';
import { RecordingLogger, mcpOptions, nodeServer } from './mcp-helpers.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const SLOW = join(FIXTURES, 'slow-start.mjs');
const DYNAMIC = join(FIXTURES, 'dynamic-server.mjs');

// Real child processes on a possibly loaded machine: every bound below is generous.
jest.setTimeout(60_000);

/** A provider config that is never called (these tests only start and stop instances). */
const PROVIDER = { providers: { local: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } } };

/** Binds `logger` as the instance's Logger. */
const loggerModule = (logger: Logger): ContainerModule =>
  new ContainerModule((o) => {
    o.bind(Logger).toConstantValue(logger);
  });

describe('MCP server start-up', () => {
  let rx: AgentRx | undefined;
  let source: McpToolSource | undefined;

  afterEach(async () => {
    await rx?.stop();
    await source?.stop();
    rx = undefined;
    source = undefined;
  });

  describe('the start budget', () => {
    describe('when servers are configured', () => {
      it('should default startTimeoutMs to 60 s and declare the longest one plus a margin as the source’s own start timeout', () => {
        const s = new McpToolSource(
          new RecordingLogger(),
          mcpOptions({ quick: { ...nodeServer(SLOW, '0'), startTimeoutMs: 1_000 }, npx: nodeServer(SLOW, '0') }),
          undefined,
        );
        expect(DEFAULT_MCP_START_TIMEOUT_MS).toBe(60_000);
        expect(s.startTimeoutMs).toBe(60_000 + MCP_START_MARGIN_MS);
        // The registry hands it to the kernel with the source's participant.
        const registry = new ToolRegistryImpl([], [s]);
        expect(registry.participants.map((p) => [p.id, p.startTimeoutMs])).toEqual([['tool-source:mcp', 60_000 + MCP_START_MARGIN_MS]]);
      });
    });

    describe('when no server is configured', () => {
      it('should declare none (the tools phase bound applies)', () => {
        expect(new McpToolSource(new RecordingLogger(), mcpOptions({}), undefined).startTimeoutMs).toBeUndefined();
      });
    });

    describe('when a server answers initialize only after timeouts.toolsPhaseMs (a first npx download)', () => {
      it('should still start: the phase bound does not cut the MCP source short', async () => {
        // The server waits 1.5 s of its own before it answers, so start-up takes longer than the 200 ms phase whatever the load.
        rx = await AgentRx.create({
          config: { ...PROVIDER, timeouts: { toolsPhaseMs: 200 }, mcp: { servers: { slow: nodeServer(SLOW, '1500') } } },
          modules: [mcpModule],
        });
        expect(rx.pluginIds.tools).toContain('slow__ping');
      });
    });

    describe('when a server never answers and its startTimeoutMs is longer than timeouts.toolsPhaseMs', () => {
      it('should fail create with the server’s own error: its name, the timeout, the option to raise and its stderr tail (redacted)', async () => {
        const logger = new RecordingLogger();
        let err: unknown;
        try {
          rx = await AgentRx.create({
            config: {
              ...PROVIDER,
              timeouts: { toolsPhaseMs: 200 },
              mcp: {
                servers: {
                  stuck: {
                    ...nodeServer(SLOW, 'never', 'npm http fetch GET 200 @acme/mcp-server', 'auth %API_TOKEN%'),
                    env: { API_TOKEN: 'sekrit-value-123' },
                    startTimeoutMs: 5_000,
                  },
                },
              },
            },
            modules: [mcpModule, loggerModule(logger)],
          });
        } catch (e) {
          err = e;
        }
        expect(isAgentRxError(err, 'timeout')).toBe(true);
        expect((err as Error).message).toBe(
          'MCP server stuck did not answer initialize within 5000 ms (raise mcp.servers.stuck.startTimeoutMs if it needs longer to start); its stderr ended with:\nnpm http fetch GET 200 @acme/mcp-server\nauth [redacted]',
        );
        expect((err as { details?: unknown }).details).toEqual({ server: 'stuck' });
        expect(logger.lines.join('\n')).not.toContain('sekrit-value-123');
      });
    });
  });

  describe('when two servers never answer', () => {
    it('should fail with one timeout error naming both servers', async () => {
      const s = new McpToolSource(
        new RecordingLogger(),
        mcpOptions({ a: { ...nodeServer(SLOW, 'never'), startTimeoutMs: 1_000 }, b: { ...nodeServer(SLOW, 'never'), startTimeoutMs: 1_500 } }),
        undefined,
      );
      const err: unknown = await s.start().then(
        () => undefined,
        (e: unknown) => e,
      );
      await s.stop();
      expect(isAgentRxError(err, 'timeout')).toBe(true);
      expect((err as Error).message).toMatch(
        /^2 MCP servers failed to start:\n- MCP server a did not answer initialize within 1000 ms .*\n- MCP server b did not answer initialize within 1500 ms /,
      );
      expect((err as { details?: Record<string, unknown> }).details?.['servers']).toEqual(['a', 'b']);
    });
  });

  describe('progress', () => {
    function recorder(quietMs?: number): { options: McpProgressOptions; events: McpProgressEvent[]; of: (server: string) => McpProgressEvent[] } {
      const events: McpProgressEvent[] = [];
      return {
        options: { onProgress: (e) => events.push(e), ...(quietMs !== undefined ? { quietMs } : {}) },
        events,
        of: (server) => events.filter((e) => e.server === server),
      };
    }

    describe('when one server starts and a silent one never answers', () => {
      it('should report starting, one waiting notice for the silent one, then ready or failed: one event per state change', async () => {
        const progress = recorder(50);
        source = new McpToolSource(
          new RecordingLogger(),
          mcpOptions({ dyn: nodeServer(DYNAMIC), mute: { ...nodeServer(SLOW, 'never'), startTimeoutMs: 3_000 } }),
          undefined,
          progress.options,
        );
        await expect(source.start()).rejects.toThrow(/^MCP server mute did not answer initialize within 3000 ms/);

        // No answer for 3 s, 60 times the quiet time: said once.
        const mute = progress.of('mute');
        expect(mute.map((e) => e.state)).toEqual(['starting', 'waiting', 'failed']);
        expect(mute[0]).toEqual({
          server: 'mute',
          state: 'starting',
          elapsedMs: expect.any(Number),
          transport: 'stdio',
          target: `${process.execPath} ${SLOW} never`,
        });
        expect(mute[1]).toMatchObject({ state: 'waiting', startTimeoutMs: 3_000 });
        expect(mute[2]).toMatchObject({ state: 'failed', error: expect.stringMatching(/^MCP server mute did not answer initialize within 3000 ms/) });
        // Reported when the timeout fired, not after the child was closed.
        expect(mute[2]!.elapsedMs).toBeGreaterThanOrEqual(3_000);

        // The other server may also be slow enough for a notice (a loaded machine), but only once.
        const dyn = progress.of('dyn').map((e) => e.state);
        expect(dyn[0]).toBe('starting');
        expect(dyn.at(-1)).toBe('ready');
        expect(dyn.filter((s) => s === 'waiting').length).toBeLessThanOrEqual(1);
        expect(progress.of('dyn').at(-1)).toMatchObject({ tools: 3 });
        expect(dyn).toHaveLength(new Set(dyn).size);
      });
    });

    describe('when a stdio server answers within quietMs', () => {
      it('should report starting and ready only (no waiting notice)', async () => {
        // Answers after 1 s of its own; the quiet time is 30 s.
        const progress = recorder(30_000);
        source = new McpToolSource(new RecordingLogger(), mcpOptions({ chatty: nodeServer(SLOW, '1000', 'resolving packages…') }), undefined, progress.options);
        await source.start();
        expect(progress.events.map((e) => e.state)).toEqual(['starting', 'ready']);
        expect(progress.events[1]!.elapsedMs).toBeGreaterThanOrEqual(1_000);
        expect(formatMcpProgress(progress.events[1]!)).toMatch(/^mcp chatty: ready, 1 tool in \d+\.\d s$/);
      });
    });

    describe('when an HTTP server refuses the connection', () => {
      it('should report its URL without credentials or query, then failed (no waiting notice)', async () => {
        const progress = recorder(1);
        source = new McpToolSource(
          new RecordingLogger(),
          mcpOptions({ remote: { url: 'http://user:pw@127.0.0.1:9/mcp?key=sekrit' } }),
          undefined,
          progress.options,
        );
        await expect(source.start()).rejects.toThrow(/^MCP server remote could not be started/);
        expect(progress.events.map((e) => e.state)).toEqual(['starting', 'failed']);
        expect(progress.events[0]).toMatchObject({ transport: 'http', target: 'http://127.0.0.1:9/mcp' });
      });
    });

    describe('when no progress listener is bound', () => {
      it('should log each step at info level', async () => {
        const logger = new RecordingLogger();
        source = new McpToolSource(logger, mcpOptions({ dyn: nodeServer(DYNAMIC) }), undefined);
        await source.start();
        const info = logger.lines.filter((l) => l.startsWith('info mcp dyn: '));
        expect(info[0]).toBe(`info mcp dyn: starting (${process.execPath} ${DYNAMIC}) {}`);
        expect(info.at(-1)).toMatch(/^info mcp dyn: ready, 3 tools in \d+\.\d s \{\}$/);
      });
    });

    describe('when the listener throws', () => {
      it('should log it and start anyway', async () => {
        const logger = new RecordingLogger();
        source = new McpToolSource(logger, mcpOptions({ dyn: nodeServer(DYNAMIC) }), undefined, {
          onProgress: () => {
            throw new Error('terminal gone');
          },
        });
        await source.start();
        expect(source.tools()).toHaveLength(3);
        expect(logger.lines.join('\n')).toContain('error mcp: the start-up progress listener failed {"error":"terminal gone"}');
      });
    });

    describe('when a progress module is given to AgentRx.create', () => {
      it('should report there instead of the logger', async () => {
        const progress = recorder();
        const logger = new RecordingLogger();
        rx = await AgentRx.create({
          config: { ...PROVIDER, mcp: { servers: { dyn: nodeServer(DYNAMIC) } } },
          modules: [mcpModule, loggerModule(logger), mcpProgressModule(progress.options.onProgress)],
        });
        expect(progress.events[0]).toMatchObject({ server: 'dyn', state: 'starting' });
        expect(progress.events.at(-1)).toMatchObject({ server: 'dyn', state: 'ready', tools: 3 });
        expect(logger.lines.filter((l) => l.startsWith('info mcp '))).toEqual([]);
      });
    });
  });

  describe('formatMcpProgress', () => {
    it('should give one line per state', () => {
      expect(
        formatMcpProgress({ server: 'files', elapsedMs: 0, state: 'starting', transport: 'stdio', target: 'npx -y @modelcontextprotocol/server-filesystem .' }),
      ).toBe('mcp files: starting (npx -y @modelcontextprotocol/server-filesystem .)');
      expect(formatMcpProgress({ server: 'files', elapsedMs: 3_004, state: 'waiting', startTimeoutMs: 60_000 })).toBe(
        'mcp files: no answer yet after 3.0 s; it may be downloading packages (first npx run), waiting up to 60 s (mcp.servers.files.startTimeoutMs)',
      );
      expect(formatMcpProgress({ server: 'files', elapsedMs: 8_240, state: 'ready', tools: 14 })).toBe('mcp files: ready, 14 tools in 8.2 s');
      expect(formatMcpProgress({ server: 'files', elapsedMs: 60_012, state: 'failed', error: 'x' })).toBe('mcp files: failed after 60.0 s');
    });
  });
});
