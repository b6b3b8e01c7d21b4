import { jest } from '@jest/globals';
import { AgentRxError } from '../../../src/core/errors.js';
import type { ToolUse } from '../../../src/core/model.js';
import type { ToolContext } from '../../../src/core/plugin/tool-handler.js';
import { RequestState } from '../../../src/core/session/request-state.js';
import { clientAnswerProblems, type ClientToolHandler } from '../../../src/core/tools/client-answers.js';
import { ToolDispatcher, type DispatchOptions } from '../../../src/core/tools/tool-dispatcher.js';
import { ToolLedger, type LedgerEntry } from '../../../src/core/tools/tool-ledger.js';

/** A frontend tool as an AG-UI endpoint gives it: its calls wait until the test answers them (`answer`), or the signal aborts. */
class ClientToolFixture implements ClientToolHandler {
  readonly name = 'ask_user';
  readonly description = 'Asks the user.';
  readonly inputSchema = { type: 'object', properties: { question: { type: 'string' } } };
  readonly awaitsClient = true;
  readonly calls: string[] = [];
  private readonly waiting = new Map<string, (content: string) => void>();
  private readonly callWaiters: { readonly n: number; readonly resolve: () => void }[] = [];

  constructor(readonly timeoutMs: number) {}

  /** Resolves once the handler has been called `n` times in all, whether that was before or after this call. */
  called(n = 1): Promise<void> {
    if (this.calls.length >= n) return Promise.resolve();
    return new Promise<void>((resolve) => this.callWaiters.push({ n, resolve }));
  }

  handle(_input: unknown, ctx: ToolContext): Promise<string> {
    this.calls.push(ctx.toolUseId);
    return new Promise<string>((resolve, reject) => {
      this.waiting.set(ctx.toolUseId, resolve);
      ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
      for (const w of this.callWaiters) if (w.n <= this.calls.length) w.resolve();
    });
  }

  answer(id: string, content: string): void {
    this.waiting.get(id)!(content);
  }
}

const ask = (id: string): ToolUse => ({ id, name: 'ask_user', input: { question: 'ok?' } });

interface Recorded {
  readonly persisted: LedgerEntry[][];
  readonly results: { id: string; replayed: boolean }[];
  holds: number;
  released: number;
}

function options(ledger: ToolLedger, extra: Partial<DispatchOptions> = {}): { opts: DispatchOptions; rec: Recorded } {
  const rec: Recorded = { persisted: [], results: [], holds: 0, released: 0 };
  const opts: DispatchOptions = {
    sessionId: 's',
    signal: new AbortController().signal,
    toolTimeoutMs: 1_000,
    concurrency: 2,
    ledger,
    persist: async () => void rec.persisted.push(ledger.snapshot()),
    onResult: (u, _r, replayed) => void rec.results.push({ id: u.id, replayed }),
    onClientWait: () => {
      rec.holds++;
      return () => void rec.released++;
    },
    ...extra,
  };
  return { opts, rec };
}

/** Tracks whether `p` has settled, without awaiting it. */
function track<T>(p: Promise<T>): { readonly settled: boolean; readonly promise: Promise<T> } {
  const state = { settled: false, promise: p };
  p.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}

describe('ToolDispatcher (tools that wait on the client)', () => {
  afterEach(() => jest.useRealTimers());

  describe('.dispatch', () => {
    describe('when the model calls a tool the client answers, and the client answers', () => {
      it("should store the wait (awaiting_client, its deadline) before asking, hold the run timeout meanwhile, and record the client's result", async () => {
        const tool = new ClientToolFixture(600_000);
        const ledger = new ToolLedger();
        const { opts, rec } = options(ledger);
        const before = Date.now();
        const running = new ToolDispatcher([tool]).dispatch([ask('c1')], opts);
        await tool.called();
        expect(rec.persisted).toHaveLength(1);
        const waiting = rec.persisted[0]!.find((e) => e.toolUseId === 'c1')!;
        expect(waiting).toMatchObject({ state: 'awaiting_client', awaits: 'tool', name: 'ask_user' });
        expect(waiting.deadline).toBeGreaterThanOrEqual(before + 600_000);
        expect(rec.holds).toBe(1);
        expect(rec.released).toBe(0);

        tool.answer('c1', 'yes');
        const [result] = await running;
        expect(result).toEqual({ toolUseId: 'c1', content: 'yes', isError: false });
        expect(ledger.get('c1')).toMatchObject({ state: 'executed', result: { content: 'yes' } });
        expect(rec.released).toBe(1);
        expect(rec.results).toEqual([{ id: 'c1', replayed: false }]);
      });
    });

    describe('when the client does not answer', () => {
      it("should end the wait after the tool's own wait time (not the tool timeout) with an error result", async () => {
        jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
        const tool = new ClientToolFixture(600_000);
        const ledger = new ToolLedger();
        const { opts, rec } = options(ledger, { toolTimeoutMs: 1_000 });
        const running = track(new ToolDispatcher([tool]).dispatch([ask('c1')], opts));
        await tool.called();

        await jest.advanceTimersByTimeAsync(599_999);
        expect(running.settled).toBe(false);
        expect(ledger.get('c1')?.state).toBe('awaiting_client');

        await jest.advanceTimersByTimeAsync(1);
        const [result] = await running.promise;
        expect(result).toMatchObject({ isError: true, content: expect.stringMatching(/client did not answer tool 'ask_user' \(c1\) within 600000 ms/) });
        expect(ledger.get('c1')?.state).toBe('executed');
        expect(rec.released).toBe(1);
      });
    });

    describe('when the session ends while the call waits', () => {
      it('should reject with the cancellation and leave the wait in the ledger, unanswered', async () => {
        const tool = new ClientToolFixture(600_000);
        const ledger = new ToolLedger();
        const ctrl = new AbortController();
        const { opts, rec } = options(ledger, { signal: ctrl.signal });
        const running = new ToolDispatcher([tool]).dispatch([ask('c1')], opts);
        await tool.called();
        ctrl.abort(new AgentRxError('cancelled', 'shutting down'));
        await expect(running).rejects.toMatchObject({ code: 'cancelled' });
        expect(ledger.get('c1')).toMatchObject({ state: 'awaiting_client', awaits: 'tool' });
        expect(ledger.get('c1')?.result).toBeUndefined();
        expect(rec.results).toEqual([]);
        expect(rec.persisted.at(-1)!.find((e) => e.toolUseId === 'c1')?.state).toBe('awaiting_client');
      });
    });

    describe("when a resumed session brings the client's answer to a stored wait", () => {
      it('should record it as the result without asking the client again', async () => {
        const tool = new ClientToolFixture(600_000);
        const ledger = new ToolLedger([{ toolUseId: 'c1', name: 'ask_user', state: 'awaiting_client', awaits: 'tool', deadline: Date.now() + 60_000 }]);
        const { opts, rec } = options(ledger, { clientResult: (id) => (id === 'c1' ? { toolUseId: 'c1', content: 'yes', isError: false } : undefined) });
        const [result] = await new ToolDispatcher([tool]).dispatch([ask('c1')], opts);
        expect(result).toEqual({ toolUseId: 'c1', content: 'yes', isError: false });
        expect(tool.calls).toEqual([]);
        expect(ledger.get('c1')?.state).toBe('executed');
        expect(rec.results).toEqual([{ id: 'c1', replayed: false }]);
      });
    });

    describe('when a resumed session finds a stored wait past its deadline', () => {
      it('should answer it with an error result that says the wait timed out', async () => {
        const ledger = new ToolLedger([{ toolUseId: 'c1', name: 'ask_user', state: 'awaiting_client', awaits: 'tool', deadline: Date.now() - 1 }]);
        const tool = new ClientToolFixture(600_000);
        const { opts } = options(ledger);
        const [result] = await new ToolDispatcher([tool]).dispatch([ask('c1')], opts);
        expect(result).toMatchObject({ isError: true, content: expect.stringMatching(/did not answer tool 'ask_user' \(c1\) before its wait timed out/) });
        expect(tool.calls).toEqual([]);
        expect(ledger.get('c1')?.state).toBe('executed');
      });
    });

    describe("when a resumed session finds a stored wait with no answer, and has the client's tool", () => {
      it('should ask the client again for what is left of the wait, not a new wait', async () => {
        jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
        const ledger = new ToolLedger([{ toolUseId: 'c1', name: 'ask_user', state: 'awaiting_client', awaits: 'tool', deadline: Date.now() + 5_000 }]);
        const tool = new ClientToolFixture(600_000);
        const { opts } = options(ledger);
        const running = track(new ToolDispatcher([tool]).dispatch([ask('c1')], opts));
        await tool.called();
        expect(ledger.get('c1')?.deadline).toBe(Date.now() + 5_000);
        await jest.advanceTimersByTimeAsync(4_999);
        expect(running.settled).toBe(false);
        await jest.advanceTimersByTimeAsync(1);
        const [result] = await running.promise;
        expect(result).toMatchObject({ isError: true, content: expect.stringMatching(/within 5000 ms/) });
      });
    });

    describe("when a resumed session finds a stored wait with no answer and without the client's tool", () => {
      it('should fail with unresolved_requires_action and keep the wait for a later resume', async () => {
        const entry: LedgerEntry = { toolUseId: 'c1', name: 'ask_user', state: 'awaiting_client', awaits: 'tool', deadline: Date.now() + 60_000 };
        const ledger = new ToolLedger([entry]);
        const { opts, rec } = options(ledger);
        await expect(new ToolDispatcher([]).dispatch([ask('c1')], opts)).rejects.toMatchObject({
          code: 'unresolved_requires_action',
          message: expect.stringContaining("waits for its client's answer"),
        });
        expect(ledger.get('c1')).toEqual(entry);
        expect(rec.persisted).toEqual([]);
      });
    });
  });
});

describe('ToolLedger (waits on the client)', () => {
  describe('.awaitClient', () => {
    it('should keep the first deadline when a resumed wait is recorded again, and refuse an id that has a result', () => {
      const ledger = new ToolLedger();
      expect(ledger.awaitClient('c1', 'ask_user', 'tool', 1_000)).toBe(true);
      expect(ledger.awaitClient('c1', 'ask_user', 'tool', 9_000)).toBe(true);
      expect(ledger.get('c1')).toMatchObject({ state: 'awaiting_client', deadline: 1_000 });
      expect(ledger.awaiting().map((e) => e.toolUseId)).toEqual(['c1']);
      ledger.record('c1', 'ask_user', { toolUseId: 'c1', content: 'x', isError: false });
      expect(ledger.awaitClient('c1', 'ask_user', 'tool', 9_000)).toBe(false);
      expect(ledger.awaiting()).toEqual([]);
    });
  });

  describe('.begin', () => {
    it('should start a use that waited for the decision to run it, and no other known one', () => {
      const ledger = new ToolLedger([
        { toolUseId: 'approved', name: 'deploy', state: 'awaiting_client', awaits: 'confirmation', deadline: 1 },
        { toolUseId: 'frontend', name: 'ask_user', state: 'awaiting_client', awaits: 'tool', deadline: 1 },
      ]);
      expect(ledger.begin('approved', 'deploy')).toBe(true);
      expect(ledger.get('approved')?.state).toBe('executing');
      expect(ledger.begin('frontend', 'ask_user')).toBe(false);
    });
  });
});

describe('clientAnswerProblems', () => {
  const ledger: LedgerEntry[] = [
    { toolUseId: 'c1', name: 'ask_user', state: 'awaiting_client', awaits: 'tool', deadline: 2_000 },
    { toolUseId: 'c2', name: 'deploy', state: 'awaiting_client', awaits: 'confirmation', deadline: 2_000 },
    { toolUseId: 'c3', name: 'echo', state: 'posted', result: { toolUseId: 'c3', content: 'x', isError: false } },
  ];

  it('should accept answers that fit the waits', () => {
    expect(
      clientAnswerProblems(ledger, { toolResults: [{ toolUseId: 'c1', content: 'y' }], confirmations: [{ toolUseId: 'c2', allow: true }] }, 1_000),
    ).toEqual([]);
  });

  it('should name an id nothing waits for, the wrong kind of answer, a timed-out wait and an id answered twice', () => {
    const problems = clientAnswerProblems(
      ledger,
      {
        toolResults: [
          { toolUseId: 'c3', content: 'y' },
          { toolUseId: 'c2', content: 'y' },
          { toolUseId: 'nope', content: 'y' },
        ],
        confirmations: [{ toolUseId: 'c2', allow: true }],
      },
      1_000,
    );
    expect(problems).toEqual([
      'c3: no tool use waits on the client with that id (it is posted)',
      expect.stringMatching(/^c2: 'deploy' waits for a decision to run it, not for a tool result/),
      'nope: no tool use waits on the client with that id',
      'c2 is answered twice',
    ]);
    expect(clientAnswerProblems(ledger, { toolResults: [{ toolUseId: 'c1', content: 'y' }] }, 2_000)).toEqual([
      expect.stringMatching(/^c1: the wait for the client's answer to 'ask_user' timed out at /),
    ]);
  });
});

describe('RequestState.hold (the run timeout while a tool waits on the client)', () => {
  afterEach(() => jest.useRealTimers());

  describe('when a wait holds the run timeout and then releases it', () => {
    it('should not time out during the wait, and time out with the time that was left after it', () => {
      jest.useFakeTimers();
      const state = new RequestState({ timeoutMs: 1_000, maxTurns: 10, turnGuard: undefined, terminalTool: undefined, maxReprompts: 0 });
      const timeouts: AgentRxError[] = [];
      state.begin('t', (e) => timeouts.push(e));
      jest.advanceTimersByTime(400);
      const releaseA = state.hold();
      const releaseB = state.hold();
      jest.advanceTimersByTime(60_000);
      releaseA();
      releaseA();
      jest.advanceTimersByTime(60_000);
      expect(timeouts).toEqual([]);
      releaseB();
      jest.advanceTimersByTime(599);
      expect(timeouts).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(timeouts).toEqual([expect.objectContaining({ code: 'timeout' })]);
    });
  });

  describe('when the request ends while held', () => {
    it('should not re-arm the timeout on a late release', () => {
      jest.useFakeTimers();
      const state = new RequestState({ timeoutMs: 1_000, maxTurns: 10, turnGuard: undefined, terminalTool: undefined, maxReprompts: 0 });
      const timeouts: AgentRxError[] = [];
      state.begin('t', (e) => timeouts.push(e));
      const release = state.hold();
      state.end();
      release();
      jest.advanceTimersByTime(5_000);
      expect(timeouts).toEqual([]);
    });
  });
});
