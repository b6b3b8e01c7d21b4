import { EventSchemas as V0Schemas } from '@ag-ui/core-v0';
import { EventSchemas as V1Schemas } from '@ag-ui/core/schemas';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import { clientRunError, failureDetail } from '../../../src/servers/agui-http/agui-http.wire-errors.js';
import { clientWireEvent, wireVersionOf } from '../../../src/servers/agui-http/agui-http.wire-version.js';

const waitingOnTools: AgUiEvent = {
  type: 'RUN_FINISHED',
  threadId: 't',
  runId: 'r',
  outcome: { type: 'success', pendingToolCallIds: ['call_ask'] },
  timestamp: 1,
};
const interrupted: AgUiEvent = {
  type: 'RUN_FINISHED',
  threadId: 't',
  runId: 'r',
  outcome: { type: 'interrupt', interrupts: [{ id: 'call_dep', reason: 'tool_confirmation', toolCallId: 'call_dep', responseSchema: { type: 'object' } }] },
};

describe('wireVersionOf', () => {
  it.each([
    [undefined, '0.0'],
    ['0.0.59', '0.0'],
    ['1.0', '1.0'],
    ['1.0.0', '1.0'],
    ['v1.2', '1.0'],
    ['2.0', '1.0'],
    ['latest', '0.0'],
    ['', '0.0'],
  ])('should read %j as the %s shape', (announced, version) => {
    expect(wireVersionOf(announced)).toBe(version);
  });
});

describe('clientWireEvent', () => {
  describe('when the client speaks 0.0 (announced no version)', () => {
    it('should drop pendingToolCallIds from a RUN_FINISHED, so 0.0.59 accepts it', () => {
      const wire = clientWireEvent(waitingOnTools, '0.0');
      expect(wire).toEqual({ type: 'RUN_FINISHED', threadId: 't', runId: 'r', outcome: { type: 'success' }, timestamp: 1 });
      expect(V0Schemas.safeParse(wire).success).toBe(true);
      expect(V0Schemas.safeParse(waitingOnTools).success).toBe(false);
    });

    it('should keep the interrupt outcome, which 0.0.59 knows', () => {
      const wire = clientWireEvent(interrupted, '0.0');
      expect(wire).toEqual(interrupted);
      expect(V0Schemas.safeParse(wire).success).toBe(true);
    });

    it('should leave a RUN_FINISHED without an outcome and other events as they are', () => {
      const plain: AgUiEvent = { type: 'RUN_FINISHED', threadId: 't', runId: 'r', result: { turns: 1 } };
      const text: AgUiEvent = { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'hi' };
      expect(clientWireEvent(plain, '0.0')).toEqual(plain);
      expect(clientWireEvent(text, '0.0')).toEqual(text);
    });
  });

  describe('when the client speaks 1.0', () => {
    it('should send the outcome whole', () => {
      expect(clientWireEvent(waitingOnTools, '1.0')).toEqual(waitingOnTools);
      expect(V1Schemas.safeParse(clientWireEvent(waitingOnTools, '1.0')).success).toBe(true);
    });
  });

  describe('when the event is the endpoint MESSAGES_SNAPSHOT', () => {
    it('should send its messages verbatim to either version', () => {
      const messages = [{ id: 'u1', role: 'user', content: 'hi' }];
      for (const version of ['0.0', '1.0'] as const) {
        expect(clientWireEvent({ type: 'MESSAGES_SNAPSHOT', messages, timestamp: 2 }, version)).toEqual({ type: 'MESSAGES_SNAPSHOT', messages, timestamp: 2 });
      }
    });
  });
});

describe('clientRunError', () => {
  const at = 'POST http://127.0.0.1:51234/v1/chat/completions';

  it.each([
    ['http_error', `${at} returned HTTP 400: Invalid parameter: messages[3].`, 'the model server refused the request (HTTP 400)'],
    [
      'http_error',
      `${at} returned HTTP 401: Incorrect API key provided. Check the local provider apiKey.`,
      'the model server refused the credentials (HTTP 401)',
    ],
    ['http_error', `${at} returned HTTP 429: Rate limit reached.`, 'the model server is rate limiting requests (HTTP 429); try again later'],
    ['http_error', `${at} returned HTTP 502: <html>Bad gateway at proxy.internal:8080</html>.`, 'the model server failed (HTTP 502)'],
    ['http_error', 'Cannot connect to the local model endpoint http://10.0.0.7:11434/v1 (connection refused)', 'the model server could not be reached'],
    ['stream_error', `The stream of ${at} broke after 3 chunks`, "the agent's event stream broke off"],
    ['timeout', `No response from ${at} within 60000 ms`, 'the run timed out'],
    ['constructor', 'a code that is not one of agentrx', 'the run failed'],
  ])('should tell the client of a %s in its own terms, never the message %j', (code, message, told) => {
    const ev = clientRunError({ type: 'RUN_ERROR', code, message, timestamp: 5 });
    expect(ev).toEqual({ type: 'RUN_ERROR', code, message: told, timestamp: 5 });
    expect(failureDetail(ev)).toBe(message);
  });

  it('should keep the first full text when an already told error is told again', () => {
    const once = clientRunError({ type: 'RUN_ERROR', code: 'http_error', message: `${at} returned HTTP 400: bad.` });
    expect(failureDetail(clientRunError(once))).toBe(`${at} returned HTTP 400: bad.`);
  });
});
