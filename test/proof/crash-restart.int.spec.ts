/**
 * Proof (issue 7, point 2): crash-restart durability of the tool ledger with the file SessionStore.
 *
 * A child process runs a session of the built package (dist/) against the CMA emulator served
 * by this process and is killed with SIGKILL at a chosen moment; a second child process resumes
 * the session by id with the same store directory. Every tool execution of every process is
 * appended to one execution log, so re-executions are counted across processes.
 */
import { join, resolve } from 'node:path';
import { FileSessionStore } from '../../src/core/store/file/file-session-store.js';
import { forkChild, useProofWorkspace, type ProofChild } from './child-process.js';
import { startCmaEmulator, type CmaEmulator, type CmaWireEvent } from '../../src/testing/cma-emulator.js';

const ROOT = resolve(process.cwd());
const CHILD = join(ROOT, 'test/proof/fixtures/crash-child.mjs');
const TOOL_USE = 'toolu_crash_1';

describe('crash-restart with the file SessionStore (child processes against the CMA emulator)', () => {
  let emu: CmaEmulator | undefined;
  const { children, storeDir, logFile, executions } = useProofWorkspace('agentrx-crash-', async () => {
    await emu?.close();
    emu = undefined;
  });
  /** The tool's ledger state as the store holds it (read through the store, as another process would). */
  const ledgerState = async (sessionId: string): Promise<string | undefined> => {
    const rec = await new FileSessionStore(storeDir()).load(sessionId);
    return rec?.ledger.find((e) => e.toolUseId === TOOL_USE)?.state;
  };
  const resultsPosts = (e: CmaEmulator): { status: number; events: CmaWireEvent[] }[] =>
    e.requests
      .filter((r) => r.method === 'POST' && /\/v1\/sessions\/[^/]+\/events$/.test(r.path))
      .map((r) => ({ status: r.status, events: (r.body as { events?: CmaWireEvent[] } | undefined)?.events ?? [] }))
      .filter((p) => p.events.some((ev) => ev['type'] === 'user.custom_tool_result'));
  const accepted = (e: CmaEmulator, sessionId: string): CmaWireEvent[] =>
    (e.sessions.get(sessionId)?.received ?? []).filter((ev) => ev['type'] === 'user.custom_tool_result');

  function spawnChild(role: 'hang' | 'fast' | 'resume', idempotent: boolean, sessionId = ''): ProofChild {
    return forkChild(CHILD, [emu!.baseUrl, storeDir(), logFile(), role, idempotent ? '1' : '0', sessionId], children);
  }

  async function kill(child: ProofChild): Promise<void> {
    child.proc.kill('SIGKILL');
    expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
  }

  /** Resumes the session in a fresh process and waits for its result and a clean exit. */
  async function resume(sessionId: string, idempotent: boolean): Promise<{ terminal: string; text: string; sessionId: string }> {
    const child = spawnChild('resume', idempotent, sessionId);
    const { result } = await child.next('result');
    // A clean exit (no leftover handle keeps the resumed process alive).
    expect(await child.exited).toEqual({ code: 0, signal: null });
    return result;
  }

  const toolScript = [{ text: 'Working.', toolUses: [{ id: TOOL_USE, name: 'work', input: { text: 'x' } }] }, { text: 'All done.' }];

  describe('(b) killed after the result is recorded in the store but before the host accepted it', () => {
    it('should not re-run the tool on resume and should post the recorded result exactly once', async () => {
      // The first results POST is answered 429 with Retry-After 60 s: not processed, and the
      // child holds its retry for a minute, so the result is recorded ('executed') and unposted.
      emu = await startCmaEmulator({ script: toolScript, heartbeatMs: 0, faults: { sendFaults: { 1: { kind: 'status', status: 429, retryAfter: 60 } } } });
      const child = spawnChild('fast', false);
      await Promise.race([
        emu.waitFor(() => resultsPosts(emu!).some((p) => p.status === 429)),
        child.exited.then((x) => Promise.reject(new Error(`child exited early: ${JSON.stringify(x)}`))),
      ]);
      const sessionId = [...emu.sessions.keys()][0]!;
      expect(await ledgerState(sessionId)).toBe('executed');
      expect(accepted(emu, sessionId)).toEqual([]);
      await kill(child);
      expect(executions()).toHaveLength(1);

      const result = await resume(sessionId, false);

      expect(result).toEqual({ terminal: 'end_turn', text: 'All done.', sessionId });
      expect(executions()).toHaveLength(1);
      expect(accepted(emu, sessionId).map((r) => [r['custom_tool_use_id'], r['is_error'], r['content']])).toEqual([
        [TOOL_USE, false, [{ type: 'text', text: 'did x' }]],
      ]);
      expect(resultsPosts(emu).map((p) => p.status)).toEqual([429, 200]);
      expect(await ledgerState(sessionId)).toBe('posted');
    }, 60_000);
  });

  describe('(a) killed while the tool runs (ledger: executing, no result)', () => {
    async function crashWhileRunning(idempotent: boolean): Promise<string> {
      emu = await startCmaEmulator({ script: toolScript, heartbeatMs: 0 });
      const child = spawnChild('hang', idempotent);
      const started = await child.next('tool_started');
      expect(started.toolUseId).toBe(TOOL_USE);
      expect(await ledgerState(started.sessionId)).toBe('executing');
      await kill(child);
      expect(executions()).toHaveLength(1);
      expect(resultsPosts(emu)).toEqual([]);
      return started.sessionId;
    }

    it('should answer an "outcome unknown" is_error result without re-running a tool that is not idempotent', async () => {
      const sessionId = await crashWhileRunning(false);

      const result = await resume(sessionId, false);

      expect(result).toEqual({ terminal: 'end_turn', text: 'All done.', sessionId });
      expect(executions()).toHaveLength(1);
      const posted = accepted(emu!, sessionId);
      expect(posted).toHaveLength(1);
      expect(posted[0]).toMatchObject({ custom_tool_use_id: TOOL_USE, is_error: true });
      expect(JSON.stringify(posted[0]!['content'])).toMatch(/outcome unknown.*not declared idempotent/);
      expect(resultsPosts(emu!)).toHaveLength(1);
    }, 60_000);

    it('should re-run a tool declared idempotent exactly once more and post its real result once', async () => {
      const sessionId = await crashWhileRunning(true);

      const result = await resume(sessionId, true);

      expect(result).toEqual({ terminal: 'end_turn', text: 'All done.', sessionId });
      const runs = executions();
      expect(runs).toHaveLength(2);
      expect(runs.map((l) => l.split(' ').slice(1))).toEqual([
        [TOOL_USE, 'hang'],
        [TOOL_USE, 'resume'],
      ]);
      expect(accepted(emu!, sessionId).map((r) => [r['custom_tool_use_id'], r['is_error'], r['content']])).toEqual([
        [TOOL_USE, false, [{ type: 'text', text: 'did x' }]],
      ]);
      expect(resultsPosts(emu!)).toHaveLength(1);
    }, 60_000);
  });
});
