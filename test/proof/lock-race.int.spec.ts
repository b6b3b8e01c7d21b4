/**
 * Proof (the file store's session lock across processes): several processes acquire the same
 * session at the same moment. Exactly one gets it, and every other is refused with a
 * `store_error` naming the winner's pid. The lock appears whole (a hard link to the winner's
 * owner file), so no racer reads a half-written lock. After the winner is killed with SIGKILL, a
 * new process takes the session over. Once the dead processes' owner files are linked by no lock,
 * the next process to make its own owner file removes them.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { forkChild, useProofWorkspace, type ProofChild } from './child-process.js';

const CHILD = join(resolve(process.cwd()), 'test/proof/fixtures/lock-child.mjs');
const RACERS = 4;

describe('FileSessionStore: processes racing for one session', () => {
  const { children, storeDir } = useProofWorkspace('agentrx-lock-race-', async () => undefined);

  /** Forks `n` children on the store for `sessionId`, each ready for the signal. */
  const ready = async (n: number, sessionId: string): Promise<ProofChild[]> => {
    const forked = Array.from({ length: n }, () => forkChild(CHILD, [storeDir(), sessionId], children));
    for (const c of forked) await c.next('ready');
    return forked;
  };
  /** Sends the signal to all at once; each child's outcome, parsed. */
  const go = async (racers: ProofChild[]): Promise<{ terminal: string; pid?: number; repairs?: string[]; code?: string; message?: string }[]> => {
    for (const c of racers) c.proc.send('go');
    return Promise.all(
      racers.map(async (c) => {
        const { result } = await c.next('result');
        return { terminal: result.terminal, ...(JSON.parse(result.text) as object) };
      }),
    );
  };

  it('should give the session to exactly one, refuse the others naming it, and let a new process take it from the killed winner', async () => {
    const racers = await ready(RACERS, 's');
    const outcomes = await go(racers);
    const winners = outcomes.filter((o) => o.terminal === 'acquired');
    expect(winners).toHaveLength(1);
    const winnerPid = winners[0]!.pid!;
    const refused = outcomes.filter((o) => o.terminal === 'refused');
    expect(refused).toHaveLength(RACERS - 1);
    for (const r of refused) {
      expect(r.code).toBe('store_error');
      expect(r.message).toContain(`session 's' is held by process ${winnerPid}`);
    }

    const winner = racers.find((c) => c.proc.pid === winnerPid)!;
    winner.proc.kill('SIGKILL');
    await winner.exited;
    const [taker] = await ready(1, 's');
    const [took] = await go([taker!]);
    expect(took).toEqual({
      terminal: 'acquired',
      pid: taker!.proc.pid,
      repairs: [`took over session 's' from process ${winnerPid}, which is no longer running`],
    });

    // Every process so far made an owner file. Once all but the taker are dead, a new process
    // removes the dead ones' files: the taker's stays (it is alive and holds 's').
    for (const c of racers) if (c !== winner) c.proc.kill('SIGKILL');
    await Promise.all(racers.map((c) => c.exited));
    expect(readdirSync(join(storeDir(), '%owners'))).toHaveLength(RACERS + 1);
    const [last] = await ready(1, 't');
    expect((await go([last!]))[0]!.terminal).toBe('acquired');
    expect(readdirSync(join(storeDir(), '%owners'))).toHaveLength(2);
  }, 60_000);
});
