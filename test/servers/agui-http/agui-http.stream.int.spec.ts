import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpAgent } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { AgUiEventStream } from '../../../src/servers/agui-http/agui-http.stream.js';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import type { ToolResultEvent } from '../../../src/core/events/session-event.js';
import { injectable } from '../../../src/core/util/inversify.js';
import type { ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import { NoInput, resetFakeTools } from '../../fakes/fake-tools.js';
import { postJson, ProtoHttpAgent, runInput, sseEvents, startStack, type Stack } from './agui-http.fixtures.js';

/** A tool that returns only once the test opens the gate. */
@injectable()
class GateToolHandler implements ToolHandler<NoInput> {
  static open: () => void = () => undefined;
  static running = false;
  readonly name = 'gate';
  readonly description = 'Waits for the test.';
  readonly inputType = NoInput;
  handle(): Promise<string> {
    GateToolHandler.running = true;
    return new Promise<string>((resolve) => (GateToolHandler.open = () => resolve('opened')));
  }
}

const toolResult: ToolResultEvent = {
  type: 'agentrx.tool_result',
  toolUse: { id: 'c1', name: 'lookup', input: { q: 'x' } },
  result: { toolUseId: 'c1', content: 'found', isError: false },
  replayed: false,
  durationMs: 7,
};

/** One of every event type agentrx produces, in an order AG-UI's verifier accepts (two runs). */
const EVERY_TYPE: AgUiEvent[] = [
  { type: 'RUN_STARTED', threadId: 't', runId: 'r1', timestamp: 1 },
  { type: 'STEP_STARTED', stepName: 'plan', timestamp: 2 },
  { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant', timestamp: 3 },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Looking it up.', timestamp: 4 },
  { type: 'TEXT_MESSAGE_END', messageId: 'm1', timestamp: 5 },
  { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'lookup', parentMessageId: 'm1', timestamp: 6 },
  { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"q":"x"}', timestamp: 7 },
  { type: 'TOOL_CALL_END', toolCallId: 'c1', timestamp: 8 },
  { type: 'TOOL_CALL_RESULT', messageId: 'c1:result', toolCallId: 'c1', content: 'found', role: 'tool', rawEvent: toolResult, timestamp: 9 },
  { type: 'CUSTOM', name: 'agentrx.turn_end', value: { turn: 1, terminal: 'requires_action', usage: { inputTokens: 3, outputTokens: 2 } }, timestamp: 10 },
  { type: 'RAW', event: { type: 'host.event', n: 1 }, source: 'local', timestamp: 11 },
  { type: 'CUSTOM', name: 'agentrx.reconnecting', value: { attempt: 1 }, timestamp: 12 },
  { type: 'STEP_FINISHED', stepName: 'plan', timestamp: 13 },
  { type: 'RUN_FINISHED', threadId: 't', runId: 'r1', result: { terminal: 'end_turn', turns: 1 }, timestamp: 14 },
  { type: 'RUN_STARTED', threadId: 't', runId: 'r2', timestamp: 15 },
  { type: 'RUN_ERROR', message: 'the host went away', code: 'stream_error', timestamp: 16 },
];

/** A server whose every POST gets `events`, written with AgUiEventStream. */
async function eventServer(events: readonly AgUiEvent[]): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.once('end', () => {
      const stream = new AgUiEventStream(res, req.headers.accept, 0);
      stream.open({});
      for (const ev of events) stream.write(ev);
      stream.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

/** The events a client run delivered to its subscriber, and whether it failed. */
async function clientEvents(agent: HttpAgent): Promise<{ events: BaseEvent[]; failures: unknown[] }> {
  const events: BaseEvent[] = [];
  const failures: unknown[] = [];
  agent.addMessage({ id: 'u1', role: 'user', content: 'go' });
  await agent.runAgent({ runId: 'r1' }, { onEvent: ({ event }) => void events.push(event), onRunFailed: ({ error }) => void failures.push(error) });
  return { events, failures };
}

describe('AgUiEventStream', () => {
  describe('when it writes one event of every type agentrx produces', () => {
    let server: Server | undefined;
    afterEach(async () => {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    });

    it('should reach the official client unchanged, as SSE and as protobuf', async () => {
      const started = await eventServer(EVERY_TYPE);
      server = started.server;
      const viaSse = await clientEvents(new HttpAgent({ url: started.url, threadId: 't' }));
      const proto = new ProtoHttpAgent(started.url, 't');
      const viaProto = await clientEvents(proto);

      expect(viaSse.failures).toEqual([]);
      expect(viaSse.events).toEqual(EVERY_TYPE);
      expect(proto.contentTypes).toEqual(['application/vnd.ag-ui.event+proto']);
      expect(viaProto.failures).toEqual([]);
      expect(viaProto.events).toEqual(EVERY_TYPE);
    });
  });
});

describe('AgUiEventStream (over HTTP)', () => {
  beforeEach(() => resetFakeTools());
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  describe('POST /agent while a tool runs longer than heartbeatMs', () => {
    it('should keep the SSE stream alive with comment lines, and the events still parse', async () => {
      stack = await startStack({
        script: [{ toolCalls: [{ id: 'c1', name: 'gate', arguments: {} }] }, { text: 'done' }],
        tools: [GateToolHandler],
        handler: { heartbeatMs: 20 },
      });
      const res = await fetch(stack.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(runInput({ threadId: 't-hb' }, 'go')),
      });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      const read = async (): Promise<boolean> => {
        const { value, done } = await reader.read();
        text += decoder.decode(value, { stream: true });
        return !done;
      };
      // A keep-alive written while the tool waits (one may also come earlier, during the model call).
      const waiting = (): boolean => GateToolHandler.running && text.lastIndexOf(': keep-alive\n\n') > text.indexOf('TOOL_CALL_END');
      while (!waiting()) if (!(await read())) throw new Error('the stream ended without a keep-alive');
      GateToolHandler.open();
      while (await read());

      const types = sseEvents(text).map((e) => e.type);
      expect(types[0]).toBe('RUN_STARTED');
      expect(types.at(-1)).toBe('RUN_FINISHED');
      expect(types).toContain('TOOL_CALL_RESULT');
      expect(
        sseEvents(text)
          .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
          .map((e) => e.delta)
          .join(''),
      ).toBe('done');
    });
  });

  describe('content negotiation', () => {
    it('should answer SSE to a wildcard or missing Accept header, and protobuf only when it is named', async () => {
      stack = await startStack({ script: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] });
      const wildcard = await postJson(stack.endpoint, runInput({ threadId: 'n1' }), { accept: '*/*' });
      expect(wildcard.headers.get('content-type')).toBe('text/event-stream');
      expect(
        sseEvents(wildcard.text)
          .map((e) => e.type)
          .at(-1),
      ).toBe('RUN_FINISHED');
      const none = await fetch(stack.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(runInput({ threadId: 'n2' })),
      });
      expect(none.headers.get('content-type')).toBe('text/event-stream');
      await none.text();
      const proto = await fetch(stack.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/vnd.ag-ui.event+proto' },
        body: JSON.stringify(runInput({ threadId: 'n3' })),
      });
      expect(proto.headers.get('content-type')).toBe('application/vnd.ag-ui.event+proto');
      // Length-prefixed frames: 4-byte big-endian lengths that add up to the whole body.
      const bytes = new Uint8Array(await proto.arrayBuffer());
      let offset = 0;
      let frames = 0;
      while (offset < bytes.length) {
        offset += 4 + new DataView(bytes.buffer, bytes.byteOffset + offset, 4).getUint32(0);
        frames++;
      }
      expect(offset).toBe(bytes.length);
      expect(frames).toBeGreaterThan(4);
    });
  });
});
