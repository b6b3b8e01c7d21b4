import type { AgentRx } from '../../../../src/agentrx.js';
import type { SessionEvent } from '../../../../src/core/events/session-event.js';
import type { SessionResult } from '../../../../src/core/model.js';
import { startCmaEmulator, type CmaEmulator, type CmaFaultPlan, type CmaScriptTurn } from '../../../../src/testing/cma-emulator.js';
import { RecordingConsumer } from '../../../../src/testing/recording-consumer.js';
import { EchoToolHandler, resetFakeTools } from '../../../fakes/fake-tools.js';
import { createCmaRx, received } from './cma-fixtures.js';

/** Three turns: tool → tool → answer. 20 event frames in all (7 + 7 + 6). */
const script: CmaScriptTurn[] = [
  { text: 'one ', toolUses: [{ id: 'toolu_a', name: 'echo', input: { text: 'x' } }], usage: { input_tokens: 3, output_tokens: 1 } },
  { text: 'two ', toolUses: [{ id: 'toolu_b', name: 'echo', input: { text: 'y' } }], usage: { input_tokens: 5, output_tokens: 2 } },
  { text: 'three', usage: { input_tokens: 7, output_tokens: 3 } },
];
const FRAMES = 20;

interface Observed {
  result: SessionResult;
  envs: SessionEvent[];
  rec: RecordingConsumer;
  emu: CmaEmulator;
  rx: AgentRx;
}

async function observe(faults: CmaFaultPlan): Promise<Observed> {
  const emu = await startCmaEmulator({ script, faults });
  const rec = new RecordingConsumer();
  const rx = await createCmaRx(emu, { consumers: [rec] });
  const s = rx.start({ prompt: 'go' });
  const envs: SessionEvent[] = [];
  s.events$.subscribe((e) => envs.push(e));
  const result = await s.result;
  s.close();
  await s.closed;
  return { result, envs, rec, emu, rx };
}

/** What a consumer shows: text and tool-call events (with their ids and content), in order. */
function contentEvents(rec: RecordingConsumer): string[] {
  return rec.events
    .filter((e) => e.type.startsWith('TEXT_MESSAGE') || e.type.startsWith('TOOL_CALL'))
    .map((e) => JSON.stringify(e, (k, v: unknown) => (k === 'timestamp' || k === 'rawEvent' ? undefined : v)));
}

describe('CmaAgentProvider stream drops through AgentRx', () => {
  let expected: { result: SessionResult; ids: string[]; text: string; frames: number; agui: string[] };
  const open: { emu: CmaEmulator; rx: AgentRx }[] = [];

  beforeAll(async () => {
    resetFakeTools();
    const clean = await observe({});
    expected = {
      result: clean.result,
      ids: clean.envs.filter((e) => e.source === 'provider').map((e) => e.id!),
      text: clean.rec.text,
      agui: contentEvents(clean.rec),
      frames: clean.emu.sessions.get(clean.result.sessionId!)!.history.length,
    };
    await clean.rx.stop();
    await clean.emu.close();
  });
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    for (const o of open.splice(0)) {
      await o.rx.stop();
      await o.emu.close();
    }
  });

  it('should have a fault-free baseline of three turns and 20 events', () => {
    expect(expected.frames).toBe(FRAMES);
    expect(expected.result).toMatchObject({ terminal: 'end_turn', text: 'three', turns: 3, usage: { inputTokens: 15, outputTokens: 6 } });
    expect(expected.text).toBe('one two three');
    expect(expected.result.events).toHaveLength(FRAMES);
    expect(expected.agui.filter((e) => e.includes('TOOL_CALL_RESULT'))).toHaveLength(2);
  });

  const cases: { after: number; kind: 'error' | 'close' }[] = [];
  for (const kind of ['error', 'close'] as const) for (let after = 0; after <= FRAMES; after++) cases.push({ after, kind });

  it.each(cases)('should give the fault-free SessionResult with no duplicate, no gap and one run per tool (drop after event $after, $kind)', async (drop) => {
    const o = await observe({ drops: [drop], duplicateOnReattach: 3 });
    open.push(o);

    expect(o.result).toEqual(expected.result);
    expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['x', 'y']);
    expect(o.envs.map((e) => e.seq)).toEqual(o.envs.map((_, i) => i + 1));
    expect(o.envs.filter((e) => e.source === 'provider').map((e) => e.id)).toEqual(expected.ids);
    expect(o.rec.text).toBe(expected.text);
    expect(contentEvents(o.rec)).toEqual(expected.agui);
    expect(o.rec.events.filter((e) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR')).toHaveLength(1);
    const sessionId = o.result.sessionId!;
    expect(received(o.emu, sessionId, 'user.custom_tool_result').map((r) => r['custom_tool_use_id'])).toEqual(['toolu_a', 'toolu_b']);
    expect(received(o.emu, sessionId, 'user.message')).toHaveLength(1);
    if (drop.after < FRAMES) {
      expect(o.emu.sessions.get(sessionId)!.attachments).toBe(2);
      expect(o.envs.some((e) => e.raw['type'] === 'agentrx.reconnected')).toBe(true);
    }
  });
});
