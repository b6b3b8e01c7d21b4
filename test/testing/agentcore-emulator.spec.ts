import { BedrockAgentCoreClient, InvokeHarnessCommand, type InvokeHarnessCommandInput } from '@aws-sdk/client-bedrock-agentcore';
import {
  BedrockAgentCoreControlClient,
  CreateHarnessCommand,
  DeleteHarnessCommand,
  GetHarnessCommand,
  ListHarnessesCommand,
} from '@aws-sdk/client-bedrock-agentcore-control';
import { startAgentCoreEmulator, type AgentCoreEmulator, type AgentCoreEmulatorOptions } from '../../src/testing/agentcore-emulator.js';
import { decodeFrame, eventFrame, rawFrame, withBadChecksum } from '../../src/testing/agentcore-emulator/frames.js';

const CREDS = { accessKeyId: 'AKIDEMULATORTEST', secretAccessKey: 'emulator-secret-never-shown' };
const SID = 'emulator-session-0123456789abcdef0123456789';
const ARN = 'arn:aws:bedrock-agentcore:eu-west-1:123456789012:harness/h-1';

type StreamEvent = Record<string, unknown>;

describe('startAgentCoreEmulator', () => {
  let emulator: AgentCoreEmulator;
  let client: BedrockAgentCoreClient;

  async function start(opts: AgentCoreEmulatorOptions, creds = CREDS): Promise<void> {
    emulator = await startAgentCoreEmulator({ credentials: CREDS, region: 'eu-west-1', ...opts });
    client = new BedrockAgentCoreClient({ endpoint: emulator.baseUrl, region: 'eu-west-1', credentials: creds, maxAttempts: 1 });
  }

  async function invoke(input: Partial<InvokeHarnessCommandInput>): Promise<StreamEvent[]> {
    const out = await client.send(
      new InvokeHarnessCommand({
        harnessArn: ARN,
        runtimeSessionId: SID,
        messages: [{ role: 'user', content: [{ text: 'hi' }] }],
        ...input,
      } as InvokeHarnessCommandInput),
    );
    const events: StreamEvent[] = [];
    for await (const ev of out.stream!) events.push(ev as unknown as StreamEvent);
    return events;
  }

  afterEach(async () => {
    client?.destroy();
    await emulator?.close();
  });

  describe('frames', () => {
    describe('when an event frame is encoded', () => {
      it('should carry the message type, the event type and the unwrapped JSON payload', () => {
        expect(decodeFrame(eventFrame('messageStop', { stopReason: 'end_turn' }))).toEqual({
          headers: { ':message-type': 'event', ':event-type': 'messageStop', ':content-type': 'application/json' },
          body: { stopReason: 'end_turn' },
        });
      });
    });
  });

  describe('damaged frames', () => {
    it('should encode a raw body verbatim and break a checksum on demand', () => {
      const raw = rawFrame('exception', 'internalServerException', 'not json');
      expect(() => decodeFrame(raw)).toThrow(SyntaxError);
      expect(() => decodeFrame(withBadChecksum(eventFrame('messageStop', { stopReason: 'end_turn' })))).toThrow(/checksum/);
    });

    it('should send the damaged frame after afterFrames good ones, end the answer, and not commit the invoke', async () => {
      await start({
        script: [{ text: 'a b c d' }, { text: 'next' }],
        faults: {
          0: { kind: 'corrupt', afterFrames: 2, damage: 'checksum' },
          1: { kind: 'corrupt', afterFrames: 1, damage: 'exception_body', exceptionType: 'internalServerException', body: 'oops <html>' },
        },
      });
      const seen: StreamEvent[] = [];
      const out = await client.send(
        new InvokeHarnessCommand({ harnessArn: ARN, runtimeSessionId: SID, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }),
      );
      await expect(
        (async () => {
          for await (const ev of out.stream!) seen.push(ev as unknown as StreamEvent);
        })(),
      ).rejects.toThrow(/checksum/);
      expect(seen).toHaveLength(2);
      // The official client loses the exception type of a non-JSON exception body (a SyntaxError).
      await expect(invoke({})).rejects.toThrow(SyntaxError);
      expect(emulator.invokes().map((r) => [r.outcome, r.message])).toEqual([
        ['fault', 'Emulated damaged frame (checksum)'],
        ['fault', 'Emulated damaged frame (exception_body)'],
      ]);
      // Neither invoke was committed: the first scripted turn is still the next one.
      const text = (await invoke({})).map((e) => (e['contentBlockDelta'] as { delta?: { text?: string } } | undefined)?.delta?.text ?? '').join('');
      expect(text).toBe('a b c d');
    });
  });

  describe('InvokeHarness', () => {
    describe('when a scripted turn has text and two tool uses, sent in 5-byte TCP writes', () => {
      it('should decode through the SDK into Converse events with the deltas split across frames', async () => {
        await start({
          chunkBytes: 5,
          script: [
            {
              text: 'Checking two things now.',
              toolUses: [
                { id: 'a', name: 'echo', input: { text: 'x' } },
                { id: 'b', name: 'add', input: { a: 1, b: 2 } },
              ],
              usage: { inputTokens: 7, outputTokens: 3 },
            },
          ],
        });
        const events = await invoke({});
        const kinds = events.map((e) => Object.keys(e)[0]);
        expect(kinds[0]).toBe('messageStart');
        expect(kinds.slice(-2)).toEqual(['messageStop', 'metadata']);
        const text = events.flatMap((e) => (e['contentBlockDelta'] as { delta: { text?: string } } | undefined)?.delta.text ?? []);
        expect(text.length).toBeGreaterThan(1);
        expect(text.join('')).toBe('Checking two things now.');
        const inputA = events.filter((e) => (e['contentBlockDelta'] as { contentBlockIndex: number } | undefined)?.contentBlockIndex === 1);
        expect(inputA.length).toBe(3);
        expect(events.at(-2)).toEqual({ messageStop: { stopReason: 'tool_use' } });
        expect(events.at(-1)).toMatchObject({ metadata: { usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 } } });
        const rec = emulator.invokes()[0]!;
        expect(rec.writes).toBeGreaterThan(rec.framesSent);
        expect(rec.framesSent).toBe(events.length);
        expect(rec.auth).toMatchObject({
          ok: true,
          signatureVerified: true,
          accessKeyId: CREDS.accessKeyId,
          region: 'eu-west-1',
          service: 'bedrock-agentcore',
        });
        expect(JSON.stringify(emulator.requests)).not.toContain(CREDS.secretAccessKey);
      });
    });

    describe('when the signature was made with another secret', () => {
      it('should answer 403 and not run the turn', async () => {
        await start({ script: [{ text: 'never' }] }, { ...CREDS, secretAccessKey: 'wrong-secret' });
        await expect(invoke({})).rejects.toMatchObject({ name: 'InvalidSignatureException', $metadata: { httpStatusCode: 403 } });
        expect(emulator.invokes()[0]!.outcome).toBe('unauthorized');
      });
    });

    describe('when the request has no Authorization header', () => {
      it('should answer 403 MissingAuthenticationToken', async () => {
        await start({ script: [{ text: 'never' }] });
        const res = await fetch(`${emulator.baseUrl}/harnesses/invoke?harnessArn=${encodeURIComponent(ARN)}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-amzn-bedrock-agentcore-runtime-session-id': SID },
          body: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] }),
        });
        expect(res.status).toBe(403);
        expect(res.headers.get('x-amzn-errortype')).toBe('MissingAuthenticationTokenException');
      });
    });

    describe('when the runtime session id is too short', () => {
      it('should answer 400 ValidationException', async () => {
        await start({ script: [{ text: 'never' }] });
        await expect(invoke({ runtimeSessionId: 'short' })).rejects.toMatchObject({ name: 'ValidationException', $metadata: { httpStatusCode: 400 } });
      });
    });

    describe('when a resume sends only the tool results', () => {
      it('should reject with a validationException frame, like the service', async () => {
        await start({ script: [{ toolUses: [{ id: 't1', name: 'echo', input: { text: 'x' } }] }, { text: 'done' }] });
        await invoke({});
        const err = await invoke({
          messages: [{ role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'X' }], status: 'success' } }] }],
        }).catch((e: unknown) => e);
        expect(err).toMatchObject({ name: 'ValidationException', message: expect.stringContaining('exceeds the number of toolUse blocks of previous turn') });
        expect(emulator.invokes()[1]!.outcome).toBe('rejected');
      });
    });

    describe('when a resume repeats a tool result id', () => {
      it('should reject with "duplicate Ids"', async () => {
        await start({ script: [{ toolUses: [{ id: 't1', name: 'echo', input: { text: 'x' } }] }, { text: 'done' }], rejectWith: 'http_400' });
        await invoke({});
        const result = { toolResult: { toolUseId: 't1', content: [{ text: 'X' }], status: 'success' as const } };
        const err = await invoke({
          messages: [
            { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'echo', input: { text: 'x' } } }] },
            { role: 'user', content: [result, result] },
          ],
        }).catch((e: unknown) => e);
        expect(err).toMatchObject({
          name: 'ValidationException',
          $metadata: { httpStatusCode: 400 },
          message: expect.stringContaining('duplicate Ids at messages.1.content'),
        });
      });
    });

    describe('when the resume pair echoes the tool use and answers it', () => {
      it('should accept it and commit the history', async () => {
        await start({ script: [{ toolUses: [{ id: 't1', name: 'echo', input: { text: 'x' } }] }, { text: 'done' }] });
        await invoke({});
        const events = await invoke({
          messages: [
            { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'echo', input: { text: 'x' } } }] },
            { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'X' }], status: 'success' } }] },
          ],
        });
        expect(events.at(-2)).toEqual({ messageStop: { stopReason: 'end_turn' } });
        expect(emulator.history(SID).map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
      });
    });

    describe('when a resume echoes a tool use the model never produced', () => {
      it('should reject it', async () => {
        await start({ script: [{ toolUses: [{ id: 't1', name: 'echo', input: { text: 'x' } }] }, { text: 'done' }] });
        await invoke({});
        const err = await invoke({
          messages: [
            { role: 'assistant', content: [{ toolUse: { toolUseId: 'other', name: 'echo', input: {} } }] },
            { role: 'user', content: [{ toolResult: { toolUseId: 'other', content: [{ text: 'X' }], status: 'success' } }] },
          ],
        }).catch((e: unknown) => e);
        expect(err).toMatchObject({ name: 'ValidationException', message: expect.stringContaining('did not produce') });
      });
    });

    describe('when the script is a function of the invoke', () => {
      it('should answer from the messages and the committed history', async () => {
        await start({
          script: (ctx) => ({ text: `#${ctx.invoke} heard "${String(ctx.messages[0]!.content[0]!['text'])}" after ${ctx.history.length} messages` }),
        });
        const first = await invoke({ messages: [{ role: 'user', content: [{ text: 'one' }] }] });
        const second = await invoke({ messages: [{ role: 'user', content: [{ text: 'two' }] }] });
        const text = (events: StreamEvent[]): string =>
          events.map((e) => (e['contentBlockDelta'] as { delta: { text?: string } } | undefined)?.delta.text ?? '').join('');
        expect(text(first)).toBe('#0 heard "one" after 0 messages');
        expect(text(second)).toBe('#1 heard "two" after 2 messages');
        await expect(emulator.waitForRequest(1)).resolves.toMatchObject({ operation: 'InvokeHarness', invoke: 1, outcome: 'completed' });
      });
    });

    describe('faults', () => {
      it('should send an exception frame mid-stream', async () => {
        await start({
          script: [{ text: 'a b c d' }],
          faults: { 0: { kind: 'exception', afterFrames: 2, exceptionType: 'internalServerException', message: 'model crashed' } },
        });
        const seen: StreamEvent[] = [];
        const out = await client.send(
          new InvokeHarnessCommand({ harnessArn: ARN, runtimeSessionId: SID, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }),
        );
        const err = await (async () => {
          for await (const ev of out.stream!) seen.push(ev as unknown as StreamEvent);
        })().catch((e: unknown) => e);
        expect(seen).toHaveLength(2);
        expect(err).toMatchObject({ name: 'InternalServerException', message: 'model crashed' });
      });

      it('should end the stream without messageStop on a clean truncation, and not consume the turn', async () => {
        await start({ script: [{ text: 'one two three' }], faults: { 0: { kind: 'truncate', afterFrames: 2 } } });
        const first = await invoke({});
        expect(first.map((e) => Object.keys(e)[0])).toEqual(['messageStart', 'contentBlockDelta']);
        const second = await invoke({});
        expect(second.at(-2)).toEqual({ messageStop: { stopReason: 'end_turn' } });
        expect(emulator.history(SID)).toHaveLength(2);
      });

      it('should answer 503 and 429 with the AWS error types', async () => {
        await start({ script: [{ text: 'x' }], faults: { 0: { kind: 'status', status: 503 }, 1: { kind: 'throttle' } } });
        await expect(invoke({})).rejects.toMatchObject({ name: 'InternalServerException', $metadata: { httpStatusCode: 503 } });
        await expect(invoke({})).rejects.toMatchObject({ name: 'ThrottlingException', $metadata: { httpStatusCode: 429 } });
      });

      it('should hold a stalled stream mid-frame until released, then complete it', async () => {
        await start({ script: [{ text: 'one two three four' }], faults: { 0: { kind: 'stall', afterFrames: 2, midFrame: true } } });
        const seen: StreamEvent[] = [];
        let reached!: () => void;
        const twoSeen = new Promise<void>((r) => (reached = r));
        const done = (async () => {
          const out = await client.send(
            new InvokeHarnessCommand({ harnessArn: ARN, runtimeSessionId: SID, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }),
          );
          for await (const ev of out.stream!) {
            seen.push(ev as unknown as StreamEvent);
            if (seen.length === 2) reached();
          }
        })();
        await twoSeen;
        expect(emulator.invokes()[0]!.framesSent).toBe(2);
        expect(seen).toHaveLength(2);
        emulator.release(0);
        await done;
        expect(seen.at(-2)).toEqual({ messageStop: { stopReason: 'end_turn' } });
        expect(emulator.invokes()[0]!.outcome).toBe('completed');
      });
    });
  });

  describe('control plane', () => {
    let control: BedrockAgentCoreControlClient;
    afterEach(() => control?.destroy());

    it('should create, walk the status sequence, list every page and delete', async () => {
      emulator = await startAgentCoreEmulator({
        credentials: CREDS,
        control: { pageSize: 2, harnesses: [{ harnessName: 'seed_a' }, { harnessName: 'seed_b' }], statusSequence: ['CREATING', 'CREATING', 'READY'] },
      });
      control = new BedrockAgentCoreControlClient({ endpoint: emulator.baseUrl, region: 'us-east-1', credentials: CREDS, maxAttempts: 1 });
      const created = await control.send(new CreateHarnessCommand({ harnessName: 'mine', executionRoleArn: 'arn:aws:iam::123456789012:role/r' }));
      expect(created.harness).toMatchObject({ harnessName: 'mine', status: 'CREATING' });
      const id = created.harness!.harnessId;
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await control.send(new GetHarnessCommand({ harnessId: id }))).harness!.status);
      expect(statuses).toEqual(['CREATING', 'CREATING', 'READY', 'READY']);
      await expect(control.send(new CreateHarnessCommand({ harnessName: 'mine', executionRoleArn: 'arn:aws:iam::123456789012:role/r' }))).rejects.toMatchObject(
        { name: 'ConflictException' },
      );
      const page1 = await control.send(new ListHarnessesCommand({}));
      expect(page1.harnesses!.map((h) => h.harnessName)).toEqual(['seed_a', 'seed_b']);
      const page2 = await control.send(new ListHarnessesCommand({ nextToken: page1.nextToken }));
      expect(page2.harnesses!.map((h) => h.harnessName)).toEqual(['mine']);
      expect(page2.nextToken).toBeUndefined();
      const deleted = await control.send(new DeleteHarnessCommand({ harnessId: id }));
      expect(deleted.harness!.status).toBe('DELETING');
      await expect(control.send(new GetHarnessCommand({ harnessId: id }))).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
      expect(emulator.requests.every((r) => r.auth.signatureVerified)).toBe(true);
    });

    it('should refuse every delete of a harness named in faults.deleteOf, and list createdAt and status', async () => {
      emulator = await startAgentCoreEmulator({
        credentials: CREDS,
        control: { harnesses: [{ harnessName: 'stuck' }, { harnessName: 'going', statuses: ['DELETING'] }], faults: { deleteOf: { stuck: { status: 403 } } } },
      });
      control = new BedrockAgentCoreControlClient({ endpoint: emulator.baseUrl, region: 'us-east-1', credentials: CREDS, maxAttempts: 1 });
      const listed = (await control.send(new ListHarnessesCommand({}))).harnesses!;
      expect(listed.map((h) => [h.harnessName, h.status, h.createdAt instanceof Date])).toEqual([
        ['stuck', 'READY', true],
        ['going', 'DELETING', true],
      ]);
      for (let i = 0; i < 2; i++) {
        await expect(control.send(new DeleteHarnessCommand({ harnessId: listed[0]!.harnessId }))).rejects.toMatchObject({ name: 'AccessDeniedException' });
      }
      await control.send(new DeleteHarnessCommand({ harnessId: listed[1]!.harnessId }));
      expect(emulator.harnesses().map((h) => h.harnessName)).toEqual(['stuck']);
    });
  });
});
