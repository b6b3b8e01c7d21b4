/**
 * Proof (the file store's ordering rule): a process appends envelopes (buffered), then records a
 * tool result with one synced transition, and is killed with SIGKILL the moment the transition
 * resolves. One fdatasync made both durable, and a new process finds the envelopes and the
 * ledger entry, in that order, then takes the dead owner's session over.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FileSessionStore } from '../../src/core/store/file/file-session-store.js';
import { forkChild, useProofWorkspace } from './child-process.js';

const CHILD = join(resolve(process.cwd()), 'test/proof/fixtures/journal-child.mjs');

describe('FileSessionStore: append then a synced transition, killed right after it resolved', () => {
  const { children, storeDir } = useProofWorkspace('agentrx-journal-order-', async () => undefined);

  it('should have made the envelopes and the ledger entry durable with one sync, envelopes first', async () => {
    const child = forkChild(CHILD, [storeDir(), 's1'], children);
    const { result } = await child.next('result');
    child.proc.kill('SIGKILL');
    expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(result).toEqual({ terminal: 'transitioned', text: 'syncs=1', sessionId: 's1' });

    const lines = readFileSync(join(storeDir(), 's1', 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    expect(lines.slice(1).map((l) => Object.keys(JSON.parse(l) as object)[0])).toEqual(['r', 'e', 'e', 'e', 'l']);
    const repairs: string[] = [];
    const store = new FileSessionStore(storeDir(), (file, what) => repairs.push(what));
    expect((await store.read('s1', 0)).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect((await store.load('s1'))!.ledger).toEqual([
      { toolUseId: 'u1', name: 'note', state: 'executed', result: { toolUseId: 'u1', content: 'noted', isError: false } },
    ]);
    const lease = await store.acquire('s1');
    expect(repairs).toEqual([expect.stringMatching(/took over session 's1' from process \d+, which is no longer running/)]);
    await lease.release();
  }, 60_000);
});
