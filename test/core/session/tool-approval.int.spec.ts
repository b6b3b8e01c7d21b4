import { AgentRx } from '../../../src/agentrx.js';
import { injectable } from '../../../src/core/util/inversify.js';
import { isAgentRxEvent, type SessionEvent } from '../../../src/core/events/session-event.js';
import type { ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import { ScriptedProvider, ev } from '../../../src/testing/scripted-provider.js';
import { EchoInput } from '../../fakes/fake-tools.js';

/** A tool whose calls the caller must allow first (as an MCP server's with `requireApproval`). */
@injectable()
class GuardedTool implements ToolHandler<EchoInput> {
  static calls: string[] = [];
  readonly name = 'guarded';
  readonly description = 'Needs approval.';
  readonly inputType = EchoInput;
  readonly requireApproval = true;
  handle(input: EchoInput): string {
    GuardedTool.calls.push(input.text);
    return `did ${input.text}`;
  }
}

const script = (): ScriptedProvider =>
  new ScriptedProvider({
    turns: [
      { events: [ev.toolUse('u1', 'guarded', { text: 'x' }), ev.idle('i1', 'requires_action', ['u1'])] },
      { events: [ev.text('t2', 'Done.'), ev.idle('i2', 'end_turn')] },
    ],
  });

async function create(provider: ScriptedProvider): Promise<AgentRx> {
  return AgentRx.create({
    defaults: false,
    providers: [provider],
    tools: [GuardedTool],
    config: { provider: provider.id, logLevel: 'silent', consumers: { terminal: false } },
  });
}

describe('a local tool that needs the caller’s approval (requireApproval)', () => {
  let rx: AgentRx | undefined;
  beforeEach(() => (GuardedTool.calls = []));
  afterEach(async () => {
    await rx?.stop();
    rx = undefined;
  });

  describe('when confirmTool allows it', () => {
    it('should run the tool once and post its result', async () => {
      const provider = script();
      rx = await create(provider);
      const asked: string[] = [];
      const result = await rx.run({ prompt: 'go', confirmTool: (u) => (asked.push(u.name), true) });
      expect(asked).toEqual(['guarded']);
      expect(GuardedTool.calls).toEqual(['x']);
      expect(result.text).toBe('Done.');
    });
  });

  describe('when confirmTool denies it', () => {
    it('should not run it, and the model reads an is_error result with the reason', async () => {
      const provider = script();
      rx = await create(provider);
      const s = rx.start({ prompt: 'go', confirmTool: () => ({ allow: false, denyMessage: 'not today' }) });
      const envs: SessionEvent[] = [];
      s.events$.subscribe((e) => envs.push(e));
      await s.result;
      s.close();
      await s.closed;
      expect(GuardedTool.calls).toEqual([]);
      const results = envs.flatMap((e) => (isAgentRxEvent(e, 'agentrx.tool_result') ? [e.raw.result] : []));
      expect(results).toEqual([{ toolUseId: 'u1', isError: true, content: "the caller did not allow tool 'guarded' to run: not today" }]);
      expect(provider.inputs.at(-1)).toMatchObject({ kind: 'resume', results: [{ toolUseId: 'u1', isError: true }] });
    });
  });

  describe('when a run has no confirmTool', () => {
    it('should fail with unresolved_requires_action saying what to pass, running nothing', async () => {
      rx = await create(script());
      await expect(rx.run({ prompt: 'go' })).rejects.toMatchObject({ code: 'unresolved_requires_action', message: expect.stringContaining('confirmTool') });
      expect(GuardedTool.calls).toEqual([]);
    });
  });

  describe('when a live session has no confirmTool', () => {
    it('should announce confirmation_required and run the tool once the caller allows it with sendEvent', async () => {
      rx = await create(script());
      const s = rx.start({ prompt: 'go' });
      const asked = new Promise<string[]>((resolve) =>
        s.events$.subscribe((e) => {
          if (isAgentRxEvent(e, 'agentrx.confirmation_required')) resolve(e.raw.toolUses.map((u) => u.id));
        }),
      );
      expect(await asked).toEqual(['u1']);
      expect(GuardedTool.calls).toEqual([]);
      await s.sendEvent({ type: 'user.tool_confirmation', tool_use_id: 'u1', result: 'allow' });
      await expect(s.result).resolves.toMatchObject({ text: 'Done.' });
      expect(GuardedTool.calls).toEqual(['x']);
      s.close();
      await s.closed;
    });
  });
});
