import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentRx } from '../../../src/agentrx.js';
import { ScriptedProvider, ev } from '../../../src/testing/scripted-provider.js';
import { EchoToolHandler, resetFakeTools } from '../../fakes/fake-tools.js';
import { tempDirSync } from '../../support/temp-dir.js';

/** The ScriptedProvider's session id: its folder can be prepared before the session starts. */
const SESSION = 'scripted-session';

describe('Session with a failing file store', () => {
  let dir: string;
  let rx: AgentRx | undefined;
  beforeEach(() => {
    resetFakeTools();
    dir = tempDirSync('agentrx-store-faults-');
  });
  afterEach(async () => {
    await rx?.stop();
    rx = undefined;
  });

  const create = (): Promise<AgentRx> =>
    AgentRx.create({
      defaults: false,
      providers: [
        new ScriptedProvider({
          turns: [{ events: [ev.toolUse('u1', 'echo', { text: 'x' }), ev.idle('i1', 'requires_action', ['u1'])] }, { events: [ev.idle('i2', 'end_turn')] }],
        }),
      ],
      tools: [EchoToolHandler],
      config: { provider: 'scripted', logLevel: 'silent', consumers: { terminal: false }, store: { type: 'file', dir } },
    });

  describe('when the disk is full (the journal is /dev/full)', () => {
    it('should end the run with store_error naming the journal at the first write, before any tool runs', async () => {
      mkdirSync(join(dir, SESSION), { recursive: true });
      symlinkSync('/dev/full', join(dir, SESSION, 'journal.jsonl'));
      rx = await create();
      await expect(rx.run({ prompt: 'go' })).rejects.toMatchObject({
        code: 'store_error',
        message: expect.stringMatching(/journal\.jsonl.*ENOSPC|ENOSPC.*journal\.jsonl/s),
      });
      // One file holds the record, the ledger and the log: nothing could be written, so nothing ran.
      expect(EchoToolHandler.calls).toHaveLength(0);
      expect(await rx.sessionStore.load(SESSION)).toBeUndefined();
    });
  });

  describe('when a stored record was written by a newer agentrx', () => {
    it('should refuse to resume with store_error naming the file, never starting afresh', async () => {
      mkdirSync(join(dir, 'newer'), { recursive: true });
      writeFileSync(join(dir, 'newer', 'journal.jsonl'), '{"version":99,"sessionId":"newer"}\n');
      rx = await create();
      await expect(rx.run({ sessionId: 'newer', prompt: 'go' })).rejects.toMatchObject({
        code: 'store_error',
        message: expect.stringMatching(/newer agentrx.*journal\.jsonl/s),
      });
      expect(EchoToolHandler.calls).toHaveLength(0);
    });
  });
});
