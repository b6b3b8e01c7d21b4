import { verifyEvents } from '@ag-ui/client';
import { from, lastValueFrom, toArray } from 'rxjs';
import { AgentRx } from '../../../../src/agentrx.js';
import { toWireEvent } from '../../../../src/servers/agui-http/agui-http.stream.js';
import type { AgUiEvent } from '../../../../src/core/events/agui-event.js';
import { TOOL_CALL_ARGS_REPLACED_EVENT } from '../../../../src/core/events/operators/to-ag-ui.js';
import { startOpenAiEmulator, type EmulatorQuirks, type EmulatorTurn, type FaultPlan, type OpenAiEmulator } from '../../../../src/testing/openai-emulator.js';
import { RecordingConsumer } from '../../../../src/testing/recording-consumer.js';
import { AddToolHandler, EchoToolHandler, resetFakeTools } from '../../../fakes/fake-tools.js';

/** The events of one tool call, by type, in stream order. */
function callEvents(events: readonly AgUiEvent[], toolCallId: string): AgUiEvent[] {
  return events.filter((e) => 'toolCallId' in e && e.toolCallId === toolCallId);
}

function typesOf(events: readonly AgUiEvent[]): string[] {
  return events.map((e) => e.type);
}

/** START, at least two ARGS, END, then RESULT: a call whose arguments streamed. */
function expectStreamedCall(events: readonly AgUiEvent[], toolCallId: string, input: unknown): void {
  const mine = callEvents(events, toolCallId);
  const types = typesOf(mine);
  expect(types[0]).toBe('TOOL_CALL_START');
  expect(types.filter((t) => t === 'TOOL_CALL_ARGS').length).toBeGreaterThanOrEqual(2);
  expect(types.slice(-2)).toEqual(['TOOL_CALL_END', 'TOOL_CALL_RESULT']);
  expect(types.filter((t) => t === 'TOOL_CALL_START')).toHaveLength(1);
  const args = mine.flatMap((e) => (e.type === 'TOOL_CALL_ARGS' ? [e.delta] : [])).join('');
  expect(JSON.parse(args)).toEqual(input);
}

/** Every event through `@ag-ui/client`'s verifier; resolves with how many passed. */
async function verified(events: readonly AgUiEvent[]): Promise<number> {
  return (await lastValueFrom(from(events.map(toWireEvent)).pipe(verifyEvents(false), toArray()))).length;
}

describe('LocalAgentProvider streaming fidelity (over HTTP, against the OpenAI emulator)', () => {
  let emulator: OpenAiEmulator | undefined;
  let rx: AgentRx | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await rx?.stop();
    await emulator?.close();
    rx = undefined;
    emulator = undefined;
  });

  /** Runs `script` through a Local session; returns the AG-UI events and the result. */
  async function run(script: EmulatorTurn[], opts: { quirks?: EmulatorQuirks; faults?: FaultPlan; stream?: boolean } = {}) {
    emulator = await startOpenAiEmulator({ script, ...(opts.quirks ? { quirks: opts.quirks } : {}), ...(opts.faults ? { faults: opts.faults } : {}) });
    const rec = new RecordingConsumer();
    rx = await AgentRx.create({
      config: {
        logLevel: 'silent',
        provider: 'local',
        providers: { local: { baseUrl: emulator.baseUrl, model: 'scripted', stream: opts.stream ?? true, maxRetries: 0 } },
        consumers: { terminal: false },
      },
      tools: [EchoToolHandler, AddToolHandler],
      consumers: [rec],
    });
    const result = await rx.run({ prompt: 'go' }).then(
      (r) => ({ ok: true as const, r }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    return { events: rec.events, result };
  }

  describe('when the model streams a tool call after some text', () => {
    it('should open the call while the text streams, send its arguments in several ARGS, and end it under the id its result uses', async () => {
      const { events, result } = await run([
        { text: 'Let me echo.', toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'hello streaming world' } }] },
        { text: 'Done.' },
      ]);

      expect(result.ok).toBe(true);
      expectStreamedCall(events, 'c1', { text: 'hello streaming world' });
      const start = events.find((e) => e.type === 'TOOL_CALL_START');
      const textStart = events.find((e) => e.type === 'TEXT_MESSAGE_START');
      // The call belongs to the message its text streamed in.
      expect(start).toMatchObject({ toolCallId: 'c1', toolCallName: 'echo', parentMessageId: (textStart as { messageId: string }).messageId });
      // Streamed, not announced at the turn's end: the call opened before the text message closed.
      expect(events.indexOf(start!)).toBeLessThan(events.findIndex((e) => e.type === 'TEXT_MESSAGE_END'));
      expect(events.some((e) => e.type === 'CUSTOM' && e.name === TOOL_CALL_ARGS_REPLACED_EVENT)).toBe(false);
      await expect(verified(events)).resolves.toBe(events.length);
    });
  });

  describe('when the model streams two parallel calls interleaved chunk by chunk', () => {
    it('should stream each under its own id, rebuild both arguments and pass the client verifier', async () => {
      const { events, result } = await run(
        [
          {
            toolCalls: [
              { id: 'p1', name: 'echo', arguments: { text: 'first call' } },
              { id: 'p2', name: 'add', arguments: { a: 12, b: 30 } },
            ],
          },
          { text: 'ok' },
        ],
        { quirks: { interleaveParallelToolCalls: true, nullFirstArguments: true, finishWithEmptyArgsDelta: true } },
      );

      expect(result.ok).toBe(true);
      expectStreamedCall(events, 'p1', { text: 'first call' });
      expectStreamedCall(events, 'p2', { a: 12, b: 30 });
      // Interleaved on the wire, interleaved in the stream: p2 opens before p1's last fragment.
      const lastArgsOfP1 = events.map((e, i) => (e.type === 'TOOL_CALL_ARGS' && e.toolCallId === 'p1' ? i : -1)).reduce((a, b) => Math.max(a, b));
      expect(events.findIndex((e) => e.type === 'TOOL_CALL_START' && e.toolCallId === 'p2')).toBeLessThan(lastArgsOfP1);
      await expect(verified(events)).resolves.toBe(events.length);
    });
  });

  describe('when the model reuses a tool-call id, across turns and within one answer', () => {
    it('should stream each reused call under the derived id its result uses, never reopening an earlier call', async () => {
      const { events, result } = await run([
        { toolCalls: [{ id: 'dup', name: 'echo', arguments: { text: 'one' } }] },
        {
          toolCalls: [
            { id: 'dup', name: 'echo', arguments: { text: 'two' } },
            { id: 'dup', name: 'echo', arguments: { text: 'three' } },
          ],
        },
        { text: 'done' },
      ]);

      expect(result.ok).toBe(true);
      expectStreamedCall(events, 'dup', { text: 'one' });
      expectStreamedCall(events, 'dup#2.0', { text: 'two' });
      expectStreamedCall(events, 'dup#2.1', { text: 'three' });
      expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['one', 'two', 'three']);
      await expect(verified(events)).resolves.toBe(events.length);
    });
  });

  describe('when the model repeats a call it already made (the loop guard answers it instead of the tool)', () => {
    it('should end the streamed repeat with the duplicate notice as its (error) result, under the same id', async () => {
      const { events, result } = await run([
        { toolCalls: [{ id: 'd1', name: 'echo', arguments: { text: 'same' } }] },
        { toolCalls: [{ id: 'd2', name: 'echo', arguments: { text: 'same' } }] },
        { text: 'done' },
      ]);

      expect(result.ok).toBe(true);
      expect(EchoToolHandler.calls).toHaveLength(1);
      expectStreamedCall(events, 'd2', { text: 'same' });
      const repeat = events.find((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === 'd2') as {
        content: string;
        rawEvent: { result: { isError: boolean } };
      };
      expect(JSON.parse(repeat.content)).toMatchObject({ duplicate: true });
      expect(repeat.rawEvent.result.isError).toBe(true);
      await expect(verified(events)).resolves.toBe(events.length);
    });
  });

  describe('when the model streams arguments that are not valid JSON', () => {
    it('should stream them as sent, end the call without a correction, and report the error result under the same id', async () => {
      const { events, result } = await run([{ toolCalls: [{ id: 'bad', name: 'echo', arguments: { text: 'cut short' } }] }, { text: 'sorry' }], {
        quirks: { invalidJsonArguments: true },
      });

      expect(result.ok).toBe(true);
      const types = typesOf(callEvents(events, 'bad'));
      expect(types.filter((t) => t === 'TOOL_CALL_ARGS').length).toBeGreaterThanOrEqual(2);
      expect(types.slice(-2)).toEqual(['TOOL_CALL_END', 'TOOL_CALL_RESULT']);
      expect(events.some((e) => e.type === 'CUSTOM' && e.name === TOOL_CALL_ARGS_REPLACED_EVENT)).toBe(false);
      expect(EchoToolHandler.calls).toHaveLength(0);
    });
  });

  describe("when the stream breaks in the middle of a call's arguments", () => {
    it('should close the open call (and text) before RUN_ERROR, so the client verifier accepts the run', async () => {
      // Chunks: role, 2 of text, the call's opener, then its first argument fragment; then the socket drops.
      const { events, result } = await run([{ text: 'Let me echo.', toolCalls: [{ id: 'cut', name: 'echo', arguments: { text: 'never finished' } }] }], {
        faults: { 0: { kind: 'drop', afterChunks: 5 } },
      });

      expect(result.ok).toBe(false);
      const types = typesOf(callEvents(events, 'cut'));
      expect(types).toEqual(['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END']);
      expect(events.at(-1)?.type).toBe('RUN_ERROR');
      await expect(verified(events)).resolves.toBe(events.length);
    });
  });

  describe('when the model streams reasoning_content before its answer', () => {
    it('should send a REASONING span and message, closed before the text starts, and pass the client verifier', async () => {
      const reasoning = 'The user wants a greeting, so I will greet them warmly.';
      const { events, result } = await run([
        { reasoning, toolCalls: [{ id: 'r1', name: 'echo', arguments: { text: 'hi there' } }] },
        { reasoning: 'It echoed. Answer now.', text: 'Hello!' },
      ]);

      expect(result.ok).toBe(true);
      const reasoningTypes = typesOf(events.filter((e) => e.type.startsWith('REASONING_')));
      expect(reasoningTypes.slice(0, 2)).toEqual(['REASONING_START', 'REASONING_MESSAGE_START']);
      expect(reasoningTypes.filter((t) => t === 'REASONING_MESSAGE_CONTENT').length).toBeGreaterThanOrEqual(4);
      expect(reasoningTypes.filter((t) => t === 'REASONING_START')).toHaveLength(2);
      expect(reasoningTypes.filter((t) => t === 'REASONING_END')).toHaveLength(2);
      const first = events.find((e) => e.type === 'REASONING_MESSAGE_START') as { messageId: string; role: string };
      expect(first.role).toBe('reasoning');
      const text = events.flatMap((e) => (e.type === 'REASONING_MESSAGE_CONTENT' && e.messageId === first.messageId ? [e.delta] : [])).join('');
      expect(text).toBe(reasoning);
      // Closed before the turn's tool call and before the next turn's text start.
      const firstEnd = events.findIndex((e) => e.type === 'REASONING_END');
      expect(firstEnd).toBeLessThan(events.findIndex((e) => e.type === 'TOOL_CALL_START'));
      const lastEnd = events.map((e, i) => (e.type === 'REASONING_END' ? i : -1)).reduce((a, b) => Math.max(a, b));
      expect(lastEnd).toBeLessThan(events.findIndex((e) => e.type === 'TEXT_MESSAGE_START'));
      expectStreamedCall(events, 'r1', { text: 'hi there' });
      await expect(verified(events)).resolves.toBe(events.length);
    });

    it('should report the whole reasoning once when the answer is not streamed', async () => {
      const { events, result } = await run([{ reasoning: 'Short thought.', text: 'Answer.' }], { stream: false });

      expect(result.ok).toBe(true);
      expect(typesOf(events.filter((e) => e.type.startsWith('REASONING_') || e.type.startsWith('TEXT_MESSAGE_')))).toEqual([
        'REASONING_START',
        'REASONING_MESSAGE_START',
        'REASONING_MESSAGE_CONTENT',
        'REASONING_MESSAGE_END',
        'REASONING_END',
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_END',
      ]);
      expect(events.find((e) => e.type === 'REASONING_MESSAGE_CONTENT')).toMatchObject({ delta: 'Short thought.' });
    });
  });
});
