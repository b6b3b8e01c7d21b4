import { fork, type ChildProcess } from 'node:child_process';
import { dirname } from 'node:path';

/** The messages a proof child sends: a tool started (and hangs), the run's result, or its error. */
export type ChildMessage =
  | { type: 'tool_started'; toolUseId: string; sessionId: string }
  | { type: 'result'; result: { terminal: string; text: string; sessionId: string } }
  | { type: 'error'; code?: string; message: string };

/** A forked proof child and what it said. */
export interface ProofChild {
  readonly proc: ChildProcess;
  readonly messages: ChildMessage[];
  /** Resolves with the first message of `type` (now or later); rejects on an `error` message or an exit before it. */
  next<T extends ChildMessage['type']>(type: T): Promise<Extract<ChildMessage, { type: T }>>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Forks `script` (plain ESM importing dist/) with `args`, an IPC channel and no inherited NODE_OPTIONS; adds it to `children`. */
export function forkChild(script: string, args: readonly string[], children: ChildProcess[]): ProofChild {
  const proc = fork(script, [...args], { cwd: dirname(script), execArgv: [], env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(proc);
  const messages: ChildMessage[] = [];
  const waiters: (() => void)[] = [];
  proc.on('message', (m) => {
    messages.push(m as ChildMessage);
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => proc.once('exit', (code, signal) => res({ code, signal })));
  const next = <T extends ChildMessage['type']>(type: T): Promise<Extract<ChildMessage, { type: T }>> =>
    new Promise((res, rej) => {
      const check = (): void => {
        const m = messages.find((x) => x.type === type || x.type === 'error');
        if (m?.type === type) res(m as Extract<ChildMessage, { type: T }>);
        else if (m) rej(new Error(`child failed: ${JSON.stringify(m)}`));
        else waiters.push(check);
      };
      check();
      void exited.then(({ code, signal }) => rej(new Error(`child exited (code ${code}, signal ${signal}) before '${type}'`)));
    });
  return { proc, messages, next, exited };
}
