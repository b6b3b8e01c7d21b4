/**
 * Proof (the session log): a Local session killed with SIGKILL in the middle of a tool and resumed
 * in a new process with a new prompt. The model's next request holds every earlier message and
 * the tool's (outcome unknown) result, the tool ran once, and the log's `seq` is gap-free across
 * both processes. Children import the built package (dist/) and share one file store directory.
 */
import { join, resolve } from 'node:path';
import { FileSessionStore } from '../../src/core/store/file/file-session-store.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { forkChild, useProofWorkspace, type ProofChild } from './child-process.js';

const ROOT = resolve(process.cwd());
const CHILD = join(ROOT, 'test/proof/fixtures/local-crash-child.mjs');

type Message = { role: string; content?: string | null; tool_calls?: { id: string }[]; tool_call_id?: string };

describe('Local session killed mid-tool and resumed in a new process (file store)', () => {
  let emu: OpenAiEmulator | undefined;
  const { children, storeDir, logFile, executions } = useProofWorkspace('agentrx-local-crash-', async () => {
    await emu?.close();
    emu = undefined;
  });

  const spawnChild = (role: 'hang' | 'resume', prompt: string, sessionId = ''): ProofChild =>
    forkChild(CHILD, [emu!.baseUrl, storeDir(), logFile(), role, prompt, sessionId], children);

  it('should send the model every earlier message and tool result, run the tool once, and keep seq gap-free across both processes', async () => {
    emu = await startOpenAiEmulator({
      script: [
        { text: 'Let me note that.', toolCalls: [{ id: 'call_note', name: 'note', arguments: { text: 'Ada' } }] },
        { text: 'I could not confirm the note.' },
        { text: 'Your name is Ada.' },
      ],
    });
    const first = spawnChild('hang', 'My name is Ada. Note it.');
    const started = await first.next('tool_started');
    expect(started.toolUseId).toBe('call_note');
    first.proc.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const second = spawnChild('resume', 'What is my name?', started.sessionId);
    const { result } = await second.next('result');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(result).toMatchObject({ terminal: 'end_turn', text: 'Your name is Ada.', sessionId: started.sessionId });

    // The first request after the restart answers the interrupted call; it holds everything before it.
    const body = (i: number): Message[] => (emu!.requests.find((r) => r.completion === i)!.body as { messages: Message[] }).messages;
    expect(body(1).map((m) => [m.role, m.tool_call_id ?? null])).toEqual([
      ['user', null],
      ['assistant', null],
      ['tool', 'call_note'],
    ]);
    expect(body(1)[0]!.content).toBe('My name is Ada. Note it.');
    expect(body(1)[1]!.tool_calls!.map((c) => c.id)).toEqual(['call_note']);
    expect(body(1)[2]!.content).toMatch(/outcome unknown/);
    expect(body(2).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(body(2).at(-1)!.content).toBe('What is my name?');
    expect(executions()).toHaveLength(1);

    const store = new FileSessionStore(storeDir());
    const log = await store.read(started.sessionId, 0, 100_000);
    expect(log.length).toBeGreaterThan(5);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    const runs = log.flatMap((e) => (e.source === 'agentrx' && e.raw.type === 'agentrx.run_started' ? [e.raw.resumed] : []));
    expect(runs).toEqual([false, true]);
    expect(await store.load(started.sessionId)).toMatchObject({
      status: 'completed',
      ledger: [expect.objectContaining({ toolUseId: 'call_note', state: 'posted' })],
    });
  }, 90_000);
});
