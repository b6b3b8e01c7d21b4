import type { AgentRx } from '../../../../src/agentrx.js';
import { startCmaEmulator, type CmaEmulator, type CmaEmulatorOptions } from '../../../../src/testing/cma-emulator.js';
import { EchoToolHandler, resetFakeTools } from '../../../fakes/fake-tools.js';
import { createCmaRx } from './cma-fixtures.js';

describe('CmaAgentProvider tool-use batches through AgentRx', () => {
  let emu: CmaEmulator | undefined;
  let rx: AgentRx | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await rx?.stop();
    await emu?.close();
    rx = undefined;
    emu = undefined;
  });

  async function setup(o: CmaEmulatorOptions): Promise<AgentRx> {
    emu = await startCmaEmulator(o);
    rx = await createCmaRx(emu);
    return rx;
  }

  describe('.run', () => {
    describe('when the host asks for one turn’s tool uses in two requires_action batches (split batch)', () => {
      it('should list the uses of both batches in result.customToolUses, once each, in order', async () => {
        const r = await setup({
          script: [
            {
              toolUses: [
                { id: 'toolu_1', name: 'echo', input: { text: 'a' } },
                { id: 'toolu_2', name: 'echo', input: { text: 'b' } },
              ],
            },
            { text: 'both' },
          ],
          faults: { splitBatchTurns: [0] },
        });
        const result = await r.run({ prompt: 'go' });
        expect(result).toMatchObject({ terminal: 'end_turn', text: 'both', turns: 3 });
        expect(result.customToolUses.map((u) => [u.id, u.input])).toEqual([
          ['toolu_1', { text: 'a' }],
          ['toolu_2', { text: 'b' }],
        ]);
        expect(EchoToolHandler.calls.map((c) => c.input.text)).toEqual(['a', 'b']);
      });
    });

    describe('when a stale idle re-names a tool use it already asked for', () => {
      it('should list that use once', async () => {
        const r = await setup({
          script: [{ toolUses: [{ id: 'toolu_s', name: 'echo', input: { text: 'x' } }] }, { text: 'done' }],
          faults: { staleIdleTurns: [0] },
        });
        const result = await r.run({ prompt: 'go' });
        expect(result).toMatchObject({ terminal: 'end_turn', text: 'done' });
        expect(result.customToolUses.map((u) => u.id)).toEqual(['toolu_s']);
      });
    });
  });
});
