import { IsString } from 'class-validator';
import { ToolDispatcher, type DispatchOptions } from '../../../src/core/tools/tool-dispatcher.js';
import { ToolLedger } from '../../../src/core/tools/tool-ledger.js';
import type { ToolContext, ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import { declarationOf } from '../../../src/core/tools/tool-schema.js';

class SlowInput {
  @IsString()
  id!: string;
}

/** Resolves each call on the next macrotask; tracks how many run at once. */
class GateTool implements ToolHandler<SlowInput> {
  readonly name = 'gate';
  readonly description = 'waits for a release';
  readonly inputType = SlowInput;
  running = 0;
  maxRunning = 0;
  readonly calls: string[] = [];
  constructor(readonly idempotent = false) {}
  async handle(input: SlowInput, _ctx: ToolContext): Promise<string> {
    this.calls.push(input.id);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    await new Promise((r) => setImmediate(r));
    this.running--;
    return `done ${input.id}`;
  }
}

function options(ledger = new ToolLedger(), extra: Partial<DispatchOptions> = {}): DispatchOptions {
  return { sessionId: 's', signal: new AbortController().signal, toolTimeoutMs: 10_000, concurrency: 2, ledger, persist: async () => undefined, ...extra };
}

const use = (id: string) => ({ id, name: 'gate', input: { id } });

describe('ToolDispatcher', () => {
  describe('.dispatch', () => {
    describe('when more tool uses than the concurrency bound arrive', () => {
      it('should run at most `concurrency` at once and return results in call order', async () => {
        const tool = new GateTool();
        const d = new ToolDispatcher([tool]);
        const results = await d.dispatch([use('a'), use('b'), use('c'), use('d')], options());
        expect(tool.maxRunning).toBe(2);
        expect(results.map((r) => r.content)).toEqual(['done a', 'done b', 'done c', 'done d']);
      });
    });

    describe('when the same id appears twice in a batch', () => {
      it('should run it once and answer both positions', async () => {
        const tool = new GateTool();
        const p = new ToolDispatcher([tool]).dispatch([use('a'), use('a')], options());
        const results = await p;
        expect(tool.calls).toEqual(['a']);
        expect(results).toHaveLength(2);
      });
    });

    describe('when the ledger already holds a result', () => {
      it('should replay it without running the tool', async () => {
        const tool = new GateTool();
        const ledger = new ToolLedger([{ toolUseId: 'a', name: 'gate', state: 'posted', result: { toolUseId: 'a', content: 'old', isError: false } }]);
        const replayed: boolean[] = [];
        const results = await new ToolDispatcher([tool]).dispatch([use('a')], options(ledger, { onResult: (_u, _r, rep) => replayed.push(rep) }));
        expect(tool.calls).toEqual([]);
        expect(results[0]!.content).toBe('old');
        expect(replayed).toEqual([true]);
      });
    });

    describe('when an execution started before a restart and recorded no result', () => {
      it('should not re-run a non-idempotent tool and report the outcome as unknown', async () => {
        const tool = new GateTool(false);
        const ledger = new ToolLedger([{ toolUseId: 'a', name: 'gate', state: 'executing' }]);
        const results = await new ToolDispatcher([tool]).dispatch([use('a')], options(ledger));
        expect(tool.calls).toEqual([]);
        expect(results[0]).toMatchObject({ isError: true, content: expect.stringContaining('outcome unknown') });
        expect(ledger.get('a')?.state).toBe('executed');
      });

      it('should re-run an idempotent tool', async () => {
        const tool = new GateTool(true);
        const ledger = new ToolLedger([{ toolUseId: 'a', name: 'gate', state: 'executing' }]);
        const p = new ToolDispatcher([tool]).dispatch([use('a')], options(ledger));
        expect((await p)[0]!.content).toBe('done a');
        expect(tool.calls).toEqual(['a']);
      });
    });

    describe('when persisting', () => {
      it('should persist before running and after the result', async () => {
        const tool = new GateTool();
        const ledger = new ToolLedger();
        const states: string[] = [];
        const p = new ToolDispatcher([tool]).dispatch([use('a')], options(ledger, { persist: async () => void states.push(ledger.get('a')?.state ?? 'none') }));
        await p;
        expect(states).toEqual(['executing', 'executed']);
      });
    });

    describe('when the input carries an inputError', () => {
      it('should not run the tool and explain the problem', async () => {
        const tool = new GateTool();
        const results = await new ToolDispatcher([tool]).dispatch(
          [{ id: 'x', name: 'gate', input: {}, inputError: 'arguments are not valid JSON' }],
          options(),
        );
        expect(tool.calls).toEqual([]);
        expect(results[0]).toMatchObject({ isError: true, content: expect.stringContaining('not valid JSON') });
      });
    });

    describe('when the input is nested 5,000 levels deep', () => {
      it('should not run the tool and answer with an is_error result naming the depth limit', async () => {
        const tool = new GateTool();
        let input: Record<string, unknown> = { id: 'x' };
        for (let i = 0; i < 5_000; i++) input = { id: 'x', nested: input };
        const results = await new ToolDispatcher([tool]).dispatch([{ id: 'x', name: 'gate', input }], options());
        expect(tool.calls).toEqual([]);
        expect(results).toEqual([{ toolUseId: 'x', isError: true, content: "invalid arguments for tool 'gate': the input is nested deeper than 64 levels" }]);
      });
    });

    describe('when the input has an unknown property', () => {
      it('should reject it with a readable message', async () => {
        const tool = new GateTool();
        const results = await new ToolDispatcher([tool]).dispatch([{ id: 'x', name: 'gate', input: { id: 'a', extra: 1 } }], options());
        expect(results[0]).toMatchObject({ isError: true, content: expect.stringContaining('extra') });
      });
    });

    describe('when the session is cancelled mid-tool', () => {
      it('should abort the tool signal and throw cancelled', async () => {
        const ctrl = new AbortController();
        let aborted = false;
        const tool: ToolHandler<SlowInput> = {
          name: 'gate',
          description: 'd',
          inputType: SlowInput,
          handle: (_i, ctx) => new Promise<string>(() => ctx.signal.addEventListener('abort', () => (aborted = true))),
        };
        let markStarted!: () => void;
        const started = new Promise<void>((resolve) => (markStarted = resolve));
        const p = new ToolDispatcher([tool]).dispatch([use('a')], options(undefined, { signal: ctrl.signal, onStarted: () => markStarted() }));
        await started;
        ctrl.abort();
        await expect(p).rejects.toMatchObject({ code: 'cancelled' });
        expect(aborted).toBe(true);
      });
    });

    describe('when a tool reads its signal only after it was aborted', () => {
      /** A tool that reads `ctx.signal` when the test says so (`read`), not when it is called. */
      function lateReader(): { tool: ToolHandler<SlowInput>; started: Promise<void>; read: () => AbortSignal } {
        let ctx: ToolContext | undefined;
        let markStarted!: () => void;
        const started = new Promise<void>((resolve) => (markStarted = resolve));
        const tool: ToolHandler<SlowInput> = {
          name: 'gate',
          description: 'd',
          inputType: SlowInput,
          handle: (_i, c) => {
            ctx = c;
            markStarted();
            return new Promise<string>(() => undefined);
          },
        };
        return { tool, started, read: () => ctx!.signal };
      }

      it('should give a signal already aborted with the timeout once the time limit passed', async () => {
        const { tool, read } = lateReader();
        const [result] = await new ToolDispatcher([tool]).dispatch([use('a')], options(undefined, { toolTimeoutMs: 30 }));
        expect(result).toMatchObject({ isError: true, content: "tool 'gate' timed out after 30 ms" });
        const signal = read();
        expect(signal.aborted).toBe(true);
        expect(signal.reason).toMatchObject({ code: 'timeout' });
        expect(read()).toBe(signal);
      });

      it("should give a signal already aborted with the session's reason once the session was cancelled", async () => {
        const { tool, started, read } = lateReader();
        const ctrl = new AbortController();
        const p = new ToolDispatcher([tool]).dispatch([use('a')], options(undefined, { signal: ctrl.signal }));
        await started;
        const reason = new Error('shutting down');
        ctrl.abort(reason);
        await expect(p).rejects.toMatchObject({ code: 'cancelled' });
        expect(read().aborted).toBe(true);
        expect(read().reason).toBe(reason);
      });
    });
  });
});

describe('declarationOf', () => {
  it('should generate the JSON Schema of the input DTO', () => {
    const decl = declarationOf(new GateTool());
    expect(decl).toEqual({
      name: 'gate',
      description: 'waits for a release',
      inputSchema: expect.objectContaining({ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }),
    });
  });

  it("should build a handler's declaration once and share it frozen", () => {
    const tool = new GateTool();
    const first = declarationOf(tool);
    expect(declarationOf(tool)).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.inputSchema)).toBe(true);
    expect(declarationOf(new GateTool())).not.toBe(first);
  });
});
