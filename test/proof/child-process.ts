import { execFile, fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { tempDirSync } from '../support/temp-dir.js';

/** The messages a proof child sends: it is ready for the parent's signal, a tool started (and hangs), the run's result, or its error. */
export type ChildMessage =
  | { type: 'ready' }
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
  const proc = fork(script, [...args], {
    cwd: dirname(script),
    execArgv: [],
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
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

/** The per-test folder of a proof spec: the store the children share and their execution log. */
export interface ProofWorkspace {
  /** Forked children of the current test (killed after it if still running). */
  readonly children: ChildProcess[];
  storeDir(): string;
  logFile(): string;
  /** One line per tool execution of any child, in order. */
  executions(): string[];
}

/**
 * Registers the hooks every proof spec with children needs: build dist/ once (the children import
 * it), a fresh folder per test (a `tempDirSync`: removed after the test, even when it or
 * `closeHost` fails), and after it: kill leftover children, `closeHost()`. Call it in a `describe`.
 */
export function useProofWorkspace(prefix: string, closeHost: () => Promise<void>): ProofWorkspace {
  const root = resolve(process.cwd());
  let dir = '';
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    // Incremental; `npm ci` already ran the prepare build.
    await promisify(execFile)('npm', ['run', 'build'], { cwd: root });
    expect(existsSync(join(root, 'dist/index.js'))).toBe(true);
  }, 180_000);
  beforeEach(() => {
    dir = tempDirSync(prefix);
  });
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await closeHost();
  });
  const logFile = (): string => join(dir, 'executions.log');
  return {
    children,
    storeDir: () => join(dir, 'store'),
    logFile,
    executions: () => (existsSync(logFile()) ? readFileSync(logFile(), 'utf8').trim().split('\n').filter(Boolean) : []),
  };
}
