import { execFile, type ExecFileException } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package as a user installs it: `npm pack` of this repository (its `dist/`, built by
 * `npm test` before jest runs), installed into an empty project with only its required
 * dependencies. Tests run the CLI, the entry points and the README's samples there, never the
 * repository's own sources or devDependencies.
 */

/** The repository root. */
export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** What a command printed and how it ended. */
export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The environment of a user's shell: this process's, without what jest and `npm test` add
 * (`NODE_OPTIONS` for jest's ESM mode, npm's per-script variables), so a child sees what a user's
 * terminal gives it. npm's cache location is kept: installs are served from the cache `npm ci`
 * filled, the registry only for what is missing.
 */
export function userEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'NODE_OPTIONS' || k === 'JEST_WORKER_ID' || (k.startsWith('npm_') && k !== 'npm_config_cache')) continue;
    env[k] = v;
  }
  return { ...env, NO_COLOR: '1', ...extra };
}

/** Runs `file args` in `cwd`; never rejects (the exit code is in the answer). */
export function run(file: string, args: readonly string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string }): Promise<Ran> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      { cwd: opts.cwd, env: opts.env ?? userEnv(), timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error: ExecFileException | null, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    else child.stdin?.end();
  });
}

/** Runs npm with the user's environment; a failure throws with npm's output. */
export async function npm(args: readonly string[], cwd: string, timeoutMs = 240_000): Promise<string> {
  const r = await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, timeoutMs });
  if (r.code !== 0) throw new Error(`npm ${args.join(' ')} failed (exit ${r.code}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** The version of a package in this repository's lock file, so the scratch project gets what the repository was tested with. */
export function lockedVersion(name: string): string {
  const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  const v = lock.packages[`node_modules/${name}`]?.version;
  if (!v) throw new Error(`${name} is not in package-lock.json`);
  return v;
}

/** A scratch project with the packed agentrx installed. */
export interface PackedProject {
  /** The project folder. */
  readonly dir: string;
  /** Runs the installed `agentrx` command (`node_modules/.bin/agentrx`). */
  agentrx(args: readonly string[], opts?: { env?: Readonly<Record<string, string>>; timeoutMs?: number }): Promise<Ran>;
  /** Runs `node <args>` in the project. */
  node(args: readonly string[], opts?: { env?: Readonly<Record<string, string>>; timeoutMs?: number }): Promise<Ran>;
  /** Writes a file of the project (relative path). */
  write(path: string, text: string): string;
  /** Installs more packages into the project (`npm install <specs>`). */
  add(specs: readonly string[]): Promise<void>;
}

/**
 * Packs the repository (without running `prepack`: `npm test` has just built `dist/`) into `dir`
 * and installs the tarball into `<dir>/app`, an empty ES-module project, with `reflect-metadata`
 * and `class-validator` (what a user adds for decorated tools) and nothing else.
 */
export async function installPackedPackage(dir: string): Promise<PackedProject> {
  if (!existsSync(join(REPO, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is not built: run npm run build (npm test builds it before jest)');
  await npm(['pack', '--ignore-scripts', '--pack-destination', dir], REPO);
  const tarball = readdirSync(dir).find((f) => /^agentrx-.*\.tgz$/.test(f));
  if (!tarball) throw new Error(`npm pack wrote no tarball into ${dir}`);
  const app = join(dir, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'packed-app', private: true, type: 'module' }, null, 2)}\n`);
  await npm(
    [
      'install',
      '--prefer-offline',
      join(dir, tarball),
      `reflect-metadata@${lockedVersion('reflect-metadata')}`,
      `class-validator@${lockedVersion('class-validator')}`,
    ],
    app,
  );
  const bin = join(app, 'node_modules', '.bin', 'agentrx');
  return {
    dir: app,
    agentrx: (args, opts = {}) => run(bin, args, { cwd: app, env: userEnv(opts.env), timeoutMs: opts.timeoutMs }),
    node: (args, opts = {}) => run(process.execPath, args, { cwd: app, env: userEnv(opts.env), timeoutMs: opts.timeoutMs }),
    write: (path, text) => {
      const file = join(app, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      return file;
    },
    add: async (specs) => void (await npm(['install', '--prefer-offline', ...specs], app)),
  };
}
