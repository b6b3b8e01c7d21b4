import { decodeFailureOf, HarnessExceptionFrame } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore-frames.js';
import { ATTEMPT_FAILED, STREAM_EXCEPTION } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore.provider.js';
import {
  startAgentCoreEmulator,
  type AgentCoreEmulator,
  type AgentCoreEmulatorOptions,
  type AgentCoreFault,
} from '../../../../src/testing/agentcore-emulator.js';
import { CREDS, collect, makeProvider, open } from './helpers.js';

/**
 * Issue 16, item 5: what the harness said (exception and error frames) is told apart from what
 * agentrx could not decode (damaged frames), the exception type survives a non-JSON body, and one
 * retry rule applies to decode failures wherever they happen in the stream.
 */
describe('AgentCoreAgentProvider frame failures', () => {
  let emulator: AgentCoreEmulator;
  let stopProvider: (() => void) | undefined;

  async function setup(opts: AgentCoreEmulatorOptions, extra: Record<string, unknown> = {}) {
    emulator = await startAgentCoreEmulator({ credentials: CREDS, region: 'eu-west-1', ...opts });
    const made = makeProvider(emulator, extra);
    stopProvider = () => made.provider.stop();
    return made;
  }

  afterEach(async () => {
    stopProvider?.();
    await emulator?.close();
  });

  describe('when a frame has a bad checksum', () => {
    // The SDK reads the first frame inside `send` and later ones while iterating: both must be
    // treated alike (before, only the first was retried).
    it.each([0, 3])('should retry the invoke when it is frame %i, and complete with the next attempt', async (afterFrames) => {
      const { provider } = await setup({ script: [{ text: 'one two three four five' }], faults: { 0: { kind: 'corrupt', afterFrames, damage: 'checksum' } } });
      const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
      expect(polled.error).toBeUndefined();
      expect(polled.completed).toBe(true);
      expect(emulator.invokes()).toHaveLength(2);
      const marker = polled.events.find((e) => e['type'] === ATTEMPT_FAILED);
      expect(marker).toMatchObject({ code: 'stream_error', reason: expect.stringContaining('could not decode') });
      expect(polled.events.filter((e) => e['type'] === STREAM_EXCEPTION)).toEqual([]);
      expect(provider.normalize(polled.events)).toMatchObject({ terminal: 'end_turn', text: 'one two three four five' });
    });

    it('should give up with stream_error, origin decode, once every attempt fails', async () => {
      const bad: AgentCoreFault = { kind: 'corrupt', afterFrames: 2, damage: 'checksum' };
      const { provider } = await setup({ script: [{ text: 'never whole' }], faults: { 0: bad, 1: bad } }, { maxRetries: 1 });
      const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
      expect(polled.error).toMatchObject({
        code: 'stream_error',
        details: { origin: 'decode', decodeKind: 'checksum', events: 2, transient: true, attempts: 2 },
      });
      const message = (polled.error as Error).message;
      expect(message).toMatch(/^agentrx could not decode the InvokeHarness event stream after 2 events \(checksum\): The message checksum/);
      expect(message).not.toContain('harness stream reported');
      expect(message).not.toContain('Deserialization error');
      expect(emulator.invokes()).toHaveLength(2);
    });
  });

  describe('when a frame has a malformed header block (the decoder throws a RangeError)', () => {
    it.each([0, 2])('should say agentrx could not decode it, not that the harness reported a RangeError (frame %i)', async (afterFrames) => {
      const { provider } = await setup({ script: [{ text: 'x y z' }], faults: { 0: { kind: 'corrupt', afterFrames, damage: 'headers' } } }, { maxRetries: 0 });
      const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
      expect(polled.error).toMatchObject({ code: 'stream_error', details: { origin: 'decode', decodeKind: 'frame', events: afterFrames, transient: true } });
      expect((polled.error as Error).message).toContain('could not decode the InvokeHarness event stream');
      expect((polled.error as Error).message).toContain('RangeError');
      expect((polled.error as Error).message).not.toContain('harness stream reported');
      expect(polled.events.filter((e) => e['type'] === STREAM_EXCEPTION)).toEqual([]);
    });
  });

  describe('when an event frame carries a payload that is not JSON', () => {
    it.each([0, 2])('should blame decoding, not the host, and mark it retryable (frame %i)', async (afterFrames) => {
      const { provider } = await setup({ script: [{ text: 'x y z' }], faults: { 0: { kind: 'corrupt', afterFrames, damage: 'payload' } } }, { maxRetries: 0 });
      const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
      expect(polled.error).toMatchObject({
        code: 'stream_error',
        details: { origin: 'decode', decodeKind: 'payload', eventType: 'contentBlockDelta', events: afterFrames, transient: true },
      });
      expect((polled.error as Error).message).not.toMatch(/harness stream reported|SyntaxError:/);
      expect(polled.events.filter((e) => e['type'] === STREAM_EXCEPTION)).toEqual([]);
    });
  });

  describe('when an exception frame has a body that is not JSON', () => {
    it.each([
      ['a modeled type', 'internalServerException', 1],
      ['an unmodeled type', 'modelStreamErrorException', 1],
      ['a modeled type in the first frame', 'validationException', 0],
    ])('should keep the :exception-type of %s and the body text, blame the host and not retry', async (_label, exceptionType, afterFrames) => {
      const { provider } = await setup({
        script: [{ text: 'a b c' }],
        faults: { 0: { kind: 'corrupt', afterFrames, damage: 'exception_body', exceptionType, body: 'upstream <b>overloaded</b>' } },
      });
      const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
      expect(polled.error).toMatchObject({
        code: 'harness_stream_error',
        details: { origin: 'host', exceptionType, message: 'upstream <b>overloaded</b>', events: afterFrames, transient: false },
      });
      expect((polled.error as Error).message).toBe(`The harness stream reported ${exceptionType}: upstream <b>overloaded</b>`);
      expect(polled.events.at(-1)).toEqual({ type: STREAM_EXCEPTION, exceptionType, message: 'upstream <b>overloaded</b>' });
      expect(emulator.invokes()).toHaveLength(1);
    });
  });

  describe('when an exception frame has a JSON body', () => {
    it('should say the host reported it (origin host), as before', async () => {
      const { provider } = await setup({
        script: [{ text: 'a b c' }],
        faults: { 0: { kind: 'exception', afterFrames: 1, exceptionType: 'internalServerException', message: 'model exploded' } },
      });
      const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
      expect(polled.error).toMatchObject({
        code: 'harness_stream_error',
        details: { origin: 'host', exceptionType: 'InternalServerException', message: 'model exploded', transient: false },
      });
      expect(emulator.invokes()).toHaveLength(1);
    });

    it('should take the message out of the JSON body of an unmodeled type too', async () => {
      const { provider } = await setup({
        script: [{ text: 'x' }],
        faults: { 0: { kind: 'exception', afterFrames: 0, exceptionType: 'throttlingException', message: 'slow down' } },
      });
      const polled = await collect(provider.pollTurn(await open(provider), provider.userInput('go')));
      expect(polled.error).toMatchObject({
        code: 'harness_stream_error',
        details: { origin: 'host', exceptionType: 'throttlingException', message: 'slow down' },
      });
      expect((polled.error as Error).message).toBe('The harness stream reported throttlingException: slow down');
    });
  });
});

describe('decodeFailureOf', () => {
  it('should count only errors of a 2xx body, and never an error frame the host sent', () => {
    expect(decodeFailureOf(new Error('Could not load credentials from any providers'), false)).toBeUndefined();
    expect(
      decodeFailureOf(
        Object.assign(new Error('The message checksum (1) did not match the expected value of 2'), { $metadata: { httpStatusCode: 200 } }),
        false,
      ),
    ).toMatchObject({ kind: 'checksum' });
    expect(decodeFailureOf(new Error('The prelude checksum specified in the message (1) does not match'), true)).toMatchObject({ kind: 'checksum' });
    expect(decodeFailureOf(new RangeError('Offset is outside the bounds of the DataView'), true)).toMatchObject({
      kind: 'frame',
      reason: 'RangeError: Offset is outside the bounds of the DataView',
    });
    expect(
      decodeFailureOf(
        new Error('AWS SDK error wrapper for RangeError: bad length\n  Deserialization error: to see the raw response, inspect the hidden field'),
        false,
      ),
    ).toMatchObject({ kind: 'frame', reason: 'RangeError: bad length' });
    expect(decodeFailureOf(Object.assign(new Error('slow down'), { name: 'throttlingException' }), true)).toBeUndefined();
    expect(decodeFailureOf(new HarnessExceptionFrame('internalServerException', 'x'), true)).toBeUndefined();
    expect(decodeFailureOf(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), true)).toBeUndefined();
  });
});
