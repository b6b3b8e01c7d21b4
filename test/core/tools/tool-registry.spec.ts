import { jest } from '@jest/globals';
import { isAgentRxError } from '../../../src/core/errors.js';
import { Kernel } from '../../../src/core/kernel/kernel.js';
import type { ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import type { ToolSource } from '../../../src/core/plugin/tool-source.js';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import { ToolDispatcher } from '../../../src/core/tools/tool-dispatcher.js';
import { ToolLedger } from '../../../src/core/tools/tool-ledger.js';
import { ToolRegistryImpl } from '../../../src/core/tools/tool-registry.js';
import { RecordingLogger } from '../../plugins/mcp/mcp-helpers.js';

const tool = (name: string, source?: string): ToolHandler => ({
  ...defineTool({ name, description: name, inputSchema: { type: 'object' }, handle: () => `ran ${name}` }),
  ...(source ? { source } : {}),
});

/** A scripted ToolSource: `set` replaces its tools and signals the change. */
class ScriptedSource implements ToolSource {
  private list: readonly ToolHandler[] = [];
  private readonly listeners = new Set<() => void>();
  started = 0;
  stopped = 0;
  constructor(
    readonly id: string,
    private readonly initial: readonly ToolHandler[],
    private readonly startImpl: () => Promise<void> = async () => undefined,
  ) {}
  async start(): Promise<void> {
    this.started++;
    await this.startImpl();
    this.list = this.initial;
  }
  stop(): void {
    this.stopped++;
  }
  tools(): readonly ToolHandler[] {
    return this.list;
  }
  onDidChangeTools(l: () => void) {
    this.listeners.add(l);
    return { dispose: () => this.listeners.delete(l) };
  }
  set(list: readonly ToolHandler[]): void {
    this.list = list;
    for (const l of this.listeners) l();
  }
}

const dispatchOne = (d: ToolDispatcher, name: string) =>
  d.dispatch([{ id: `u-${name}`, name, input: {} }], {
    sessionId: 's',
    signal: new AbortController().signal,
    toolTimeoutMs: 1000,
    concurrency: 1,
    ledger: new ToolLedger(),
    persist: async () => undefined,
  });

async function startAll(registry: ToolRegistryImpl, logger = new RecordingLogger(), timeoutMs = 5_000): Promise<Kernel> {
  const kernel = new Kernel([{ name: 'tools', participants: registry.participants, timeoutMs }], logger);
  await kernel.start();
  return kernel;
}

describe('ToolRegistryImpl', () => {
  describe('when a source adds and removes tools after start', () => {
    it('should show the current list and the dispatcher should find tools at call time', async () => {
      const source = new ScriptedSource('s', [tool('s__a', 'mcp:s')]);
      const registry = new ToolRegistryImpl([tool('local')], [source]);
      const dispatcher = new ToolDispatcher(registry);
      const changes: string[][] = [];
      registry.onDidChangeTools(() => changes.push(registry.ids));
      expect(registry.ids).toEqual(['local']);
      await startAll(registry);
      expect(registry.ids).toEqual(['local', 's__a']);

      source.set([tool('s__b', 'mcp:s')]);
      expect(registry.ids).toEqual(['local', 's__b']);
      const [gone] = await dispatchOne(dispatcher, 's__a');
      expect(gone).toMatchObject({ isError: true, content: "unknown tool 's__a'; available tools: local, s__b" });
      const [added] = await dispatchOne(dispatcher, 's__b');
      expect(added).toMatchObject({ isError: false, content: 'ran s__b' });
      expect(changes).toEqual([
        ['local', 's__a'],
        ['local', 's__b'],
      ]);
    });
  });

  describe('when a source starts with tools whose names are taken', () => {
    it('should fail start-up with invalid_config naming both sides of every collision', async () => {
      const source = new ScriptedSource('mcp', [tool('local', 'mcp:x'), tool('other', 'mcp:x'), tool('fine', 'mcp:x')]);
      const registry = new ToolRegistryImpl([tool('local'), tool('other')], [source]);
      await startAll(registry);
      const err = registry.startFailure;
      expect(isAgentRxError(err, 'invalid_config')).toBe(true);
      const message = (err as Error).message;
      expect(message).toContain("tools.local: tool name 'local' of mcp:x tool 'local' collides with schema tool 'local'");
      expect(message).toContain("tools.other: tool name 'other' of mcp:x tool 'other' collides with schema tool 'other'");
      expect(message).toMatch(/\(2 issues\)/);
      expect(registry.ids).toEqual(['local', 'other']);
    });
  });

  describe('when a source adds a colliding tool later', () => {
    it('should leave it out, log it and keep the rest', async () => {
      const logger = new RecordingLogger();
      const source = new ScriptedSource('mcp', []);
      const registry = new ToolRegistryImpl([tool('local')], [source], logger);
      await startAll(registry);
      expect(registry.startFailure).toBeUndefined();
      source.set([tool('local', 'mcp:x'), tool('x__new', 'mcp:x')]);
      expect(registry.ids).toEqual(['local', 'x__new']);
      expect(registry.get('local')?.source).toBeUndefined();
      expect(logger.lines.join('\n')).toContain("tool 'local' of mcp:x tool 'local' is left out: schema tool 'local' has the same name");
    });
  });

  describe("when a source's start throws", () => {
    it('should keep that error for startFailure', async () => {
      const source = new ScriptedSource('mcp', [], async () => {
        throw new Error('server x never answered');
      });
      const registry = new ToolRegistryImpl([], [source]);
      await startAll(registry);
      expect((registry.startFailure as Error).message).toBe('server x never answered');
    });
  });

  describe("when a source's start overruns the tools phase", () => {
    it('should report it as not started, naming it', async () => {
      jest.useFakeTimers();
      try {
        const source = new ScriptedSource('slow', [], () => new Promise<void>(() => undefined));
        const registry = new ToolRegistryImpl([], [source]);
        const starting = startAll(registry, new RecordingLogger(), 100);
        await jest.advanceTimersByTimeAsync(150);
        await starting;
        expect(isAgentRxError(registry.startFailure, 'timeout')).toBe(true);
        expect((registry.startFailure as Error).message).toMatch(/tool source 'slow' did not finish starting within timeouts.toolsPhaseMs/);
      } finally {
        jest.useRealTimers();
      }
    });
  });

  describe('when the kernel stops', () => {
    it('should stop every source once', async () => {
      const source = new ScriptedSource('s', []);
      const registry = new ToolRegistryImpl([], [source]);
      const kernel = await startAll(registry);
      await kernel.stop();
      await kernel.stop();
      expect(source.stopped).toBe(1);
    });
  });

  describe('when two static tools share a name', () => {
    it('should refuse them (duplicate_plugin)', () => {
      let err: unknown;
      try {
        new ToolRegistryImpl([tool('a'), tool('a')]);
      } catch (e) {
        err = e;
      }
      expect(isAgentRxError(err, 'duplicate_plugin')).toBe(true);
    });
  });
});
