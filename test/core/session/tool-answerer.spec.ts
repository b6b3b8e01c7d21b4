import { Observable } from 'rxjs';
import type { AgentRxEvent } from '../../../src/core/events/session-event.js';
import { MemoryLogger } from '../../../src/core/logger.js';
import type { RawEvent, ToolConfirmation, ToolResult, ToolUse, TurnResult } from '../../../src/core/model.js';
import type { TurnProvider } from '../../../src/core/plugin/agent-provider.js';
import type { RecoveryEvent } from '../../../src/core/session/host-event-drafts.js';
import { Answer, ToolAnswerer, type ToolAnswererOptions } from '../../../src/core/session/tool-answerer.js';
import { MemorySessionStore } from '../../../src/core/store/memory/memory-session-store.js';
import { SESSION_LOG_VERSION, type SessionStore } from '../../../src/core/store/session-store.js';
import { ToolDispatcher } from '../../../src/core/tools/tool-dispatcher.js';
import { EchoToolHandler, resetFakeTools } from '../../fakes/fake-tools.js';
import { TestProviderBase } from './session-parts.fixtures.js';

/** A host whose inputs are plain records, so the answers can be read back. */
class RecordHost extends TestProviderBase implements TurnProvider {
  readonly id = 'record-host';
  readonly mode = 'request_response' as const;
  pollTurn(): Observable<RawEvent> {
    return new Observable();
  }
  override resumeInput(toolUses: readonly ToolUse[], results: readonly ToolResult[]): unknown {
    return { kind: 'resume', ids: toolUses.map((u) => u.id), results: results.map((r) => r.content) };
  }
  confirmationInput(decisions: readonly ToolConfirmation[], results?: unknown): unknown {
    return { kind: 'confirm', decisions, results };
  }
}

const echo = (id: string, text = 'hi'): ToolUse => ({ id, name: 'echo', input: { text } });
const asked = (ids: string[], uses: ToolUse[] = [], confirmationToolUses: ToolUse[] = []): TurnResult => ({
  terminal: 'requires_action',
  stopReason: 'requires_action',
  text: '',
  customToolUses: uses,
  serverToolUses: [],
  usage: { inputTokens: 0, outputTokens: 0 },
  events: [],
  requestedToolUseIds: ids,
  confirmationToolUses,
});

async function setup(opts: Partial<ToolAnswererOptions> = {}, history: RecoveryEvent[] = [], provider: TurnProvider = new RecordHost()) {
  const emitted: AgentRxEvent[] = [];
  const store = new MemorySessionStore();
  await store.save({
    version: SESSION_LOG_VERSION,
    sessionId: 's-1',
    provider: 'record-host',
    threadId: 's-1',
    status: 'running',
    createdAt: 0,
    updatedAt: 0,
    ledger: [],
  });
  const checkpoints: string[] = [];
  const answerer = new ToolAnswerer(
    {
      provider,
      dispatcher: new ToolDispatcher([new EchoToolHandler()]),
      store,
      logger: new MemoryLogger(),
      emit: (e) => emitted.push(e),
      sessionId: () => 's-1',
      history: () => history,
      beforeTools: async () => void checkpoints.push('tools'),
      beforeRecord: async () => void checkpoints.push('record'),
    },
    { confirmTool: undefined, live: false, toolTimeoutMs: 1_000, toolConcurrency: 2, ...opts },
  );
  return { answerer, emitted, store, checkpoints };
}

describe('ToolAnswerer', () => {
  beforeEach(() => resetFakeTools());

  describe('.asked', () => {
    describe('when the boundary names a use from an earlier batch and one answered before', () => {
      it('should recover the first from history and replay the second from the ledger, in the named order', async () => {
        // The history holds the earlier batch's use and the boundary that names both.
        const { answerer } = await setup({}, [
          { kind: 'tool_use', runBy: 'caller', use: echo('u-old', 'old') },
          { kind: 'turn_end', requiresAction: { toolUseIds: ['u-done', 'u-old'] } },
        ]);
        const first = await answerer.answer(answerer.asked(asked(['u-done'], [echo('u-done', 'done')])), new AbortController().signal);
        await answerer.posted(first!);
        const turn = answerer.asked(asked(['u-done', 'u-old']));
        expect(turn.uses.map((u) => u.id)).toEqual(['u-done', 'u-old']);
        const answer = await answerer.answer(turn, new AbortController().signal);
        expect(answer!.input).toEqual({ kind: 'resume', ids: ['u-done', 'u-old'], results: ['DONE', 'OLD'] });
        expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['done', 'old']);
      });
    });

    describe('when none of the named uses can be found', () => {
      it('should throw unresolved_requires_action', async () => {
        const { answerer } = await setup();
        expect(() => answerer.asked(asked(['ghost']))).toThrow(expect.objectContaining({ code: 'unresolved_requires_action' }));
      });
    });
  });

  describe('.answer', () => {
    const shell: ToolUse = { id: 'c1', name: 'bash', input: { command: 'ls' } };

    describe('when a run must confirm a host tool and has no confirmTool', () => {
      it('should announce it and fail before running any custom tool', async () => {
        const { answerer, emitted } = await setup();
        const turn = answerer.asked(asked(['u1', 'c1'], [echo('u1')], [shell]));
        await expect(answerer.answer(turn, new AbortController().signal)).rejects.toMatchObject({
          code: 'unresolved_requires_action',
          message: expect.stringContaining("'bash' (c1)"),
        });
        expect(EchoToolHandler.calls).toEqual([]);
        expect(emitted.map((e) => e.type)).toEqual(['agentrx.confirmation_required']);
      });
    });

    describe('when a live session must confirm a host tool and has no confirmTool', () => {
      it('should answer the custom tools alone and wait for the caller', async () => {
        const { answerer } = await setup({ live: true });
        const turn = answerer.asked(asked(['u1', 'c1'], [echo('u1')], [shell]));
        const answer = await answerer.answer(turn, new AbortController().signal);
        expect(answer!.input).toEqual({ kind: 'resume', ids: ['u1'], results: ['HI'] });
        expect(answerer.waitsForCaller(turn.confirmations)).toBe(true);
      });
    });

    describe('when confirmTool decides, and throws for one tool', () => {
      it('should post results and decisions in one input, denying the tool whose decision failed', async () => {
        const other: ToolUse = { id: 'c2', name: 'rm', input: {} };
        const { answerer, emitted } = await setup({
          confirmTool: (u) => {
            if (u.name === 'rm') throw new Error('policy service down');
            return true;
          },
        });
        const turn = answerer.asked(asked(['u1', 'c1', 'c2'], [echo('u1')], [shell, other]));
        const answer = await answerer.answer(turn, new AbortController().signal);
        expect(answer!.input).toEqual({
          kind: 'confirm',
          decisions: [
            { toolUseId: 'c1', allow: true },
            { toolUseId: 'c2', allow: false, denyMessage: 'the confirmation failed' },
          ],
          results: { kind: 'resume', ids: ['u1'], results: ['HI'] },
        });
        expect(answer!.toolUseIds).toEqual(['u1']);
        expect(emitted.filter((e) => e.type === 'agentrx.tool_confirmation')).toHaveLength(2);
        expect(answerer.waitsForCaller(turn.confirmations)).toBe(false);
        expect(answerer.unanswered({ uses: [], confirmations: [shell] }).confirmations).toEqual([]);
      });
    });
  });

  describe('.posted and .unanswered', () => {
    it('should leave posted results out of a redrive and persist the ledger', async () => {
      const { answerer, store, checkpoints } = await setup();
      const answer = await answerer.answer({ uses: [echo('u1'), echo('u2')], confirmations: [] }, new AbortController().signal);
      // The record is brought up to date once before the tools run; the log is made durable before each ledger change.
      expect(checkpoints[0]).toBe('tools');
      expect(checkpoints.slice(1).every((c) => c === 'record')).toBe(true);
      await answerer.posted(new Answer(answer!.input, ['u1']));
      expect(answerer.unanswered({ uses: [echo('u1'), echo('u2')], confirmations: [] }).uses.map((u) => u.id)).toEqual(['u2']);
      expect((await store.load('s-1'))!.ledger.map((e) => [e.toolUseId, e.state])).toEqual([
        ['u1', 'posted'],
        ['u2', 'executed'],
      ]);
    });

    it('should keep a posted result in a redrive when the conversation is client-held, and replay it without running the tool', async () => {
      class TranscriptHost extends RecordHost {
        transcript(): readonly RawEvent[] {
          return [];
        }
      }
      // A resume of a client-held conversation: the transcript restored is the one checkpointed
      // before the tool ran, so the model has not seen the result the ledger says was posted.
      const { answerer, emitted } = await setup({}, [], new TranscriptHost());
      const first = await answerer.answer({ uses: [echo('u1')], confirmations: [] }, new AbortController().signal);
      await answerer.posted(first!);
      resetFakeTools();
      const open = answerer.unanswered({ uses: [echo('u1')], confirmations: [] });
      expect(open.uses.map((u) => u.id)).toEqual(['u1']);
      const again = await answerer.answer(open, new AbortController().signal);
      expect(again!.input).toEqual(first!.input);
      expect(EchoToolHandler.calls).toEqual([]);
      expect(emitted.filter((e) => e.type === 'agentrx.tool_result').map((e) => (e as { replayed: boolean }).replayed)).toEqual([false, true]);
    });
  });

  describe('.answer, synced ledger writes', () => {
    /** The `sync` option of every ledger transition the answerer makes, as `<state>:<sync>`. */
    async function syncsOf(provider: TurnProvider): Promise<string[]> {
      const { answerer, store } = await setup({}, [], provider);
      const seen: string[] = [];
      const transition = store.transition.bind(store);
      (store as SessionStore).transition = (id, was, entry, options) => {
        seen.push(`${entry.state}:${String(options?.sync ?? true)}`);
        return transition(id, was, entry);
      };
      await answerer.answer({ uses: [echo('u1')], confirmations: [] }, new AbortController().signal);
      return seen;
    }

    it('should sync a recorded result before it is posted to a host that keeps what it is posted', async () => {
      expect(await syncsOf(new RecordHost())).toEqual(['executing:true', 'executed:true']);
    });

    it('should not sync a recorded result when the conversation is client-held (a provider with a transcript)', async () => {
      class TranscriptHost extends RecordHost {
        transcript(): readonly RawEvent[] {
          return [];
        }
      }
      // The tool's start is still synced (it is not idempotent): a crash after it reads "outcome unknown".
      expect(await syncsOf(new TranscriptHost())).toEqual(['executing:true', 'executed:false']);
    });
  });
});
