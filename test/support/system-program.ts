import { existsSync, readFileSync } from 'node:fs';

/**
 * A program of the operating system that some tests drive (a browser, a server), never
 * downloaded by them: `.ci/run` installs it with `install`.
 */
export interface SystemProgram {
  /** Absolute path of the executable. */
  readonly path: string;
  /** The command that installs it on Debian, for the message. */
  readonly install: string;
}

/** The programs, in one file that jest's global setup (test/global-setup.mjs) reads too. */
const PROGRAMS = JSON.parse(readFileSync(new URL('./system-programs.json', import.meta.url), 'utf8')) as Record<'chromium' | 'redis-server', SystemProgram>;

/** Debian's Chromium, driven by playwright-core in the AG-UI page's browser test. */
export const CHROMIUM: SystemProgram = PROGRAMS.chromium;
/** Flags every headless Chromium of the tests runs with: no network of its own, no sandbox (containers), no GPU. */
export const CHROMIUM_FLAGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** Debian's redis-server, for the Redis store and the distributed runner's tests. */
export const REDIS_SERVER: SystemProgram = PROGRAMS['redis-server'];

/** What to do with tests that need some programs. */
export interface ProgramCheck {
  /** Every program is there: run the tests. */
  readonly run: boolean;
  /** `CI=true` and one is missing: the tests must fail (with `message`). */
  readonly fail: boolean;
  /** The one line naming what is missing and how to install it; '' when nothing is. */
  readonly message: string;
}

/**
 * Whether tests needing `programs` can run here. Pure (the file system aside), so its rule is
 * tested on its own: all present → run; one missing → skip, except under `CI=true` (CI installs
 * them, so a missing one there is a broken CI script) → fail.
 */
export function checkPrograms(
  programs: readonly SystemProgram[],
  env: Readonly<Record<string, string | undefined>> = process.env,
  exists: (path: string) => boolean = existsSync,
): ProgramCheck {
  const missing = programs.filter((p) => !exists(p.path));
  if (missing.length === 0) return { run: true, fail: false, message: '' };
  const ci = env['CI'] === 'true';
  const what = missing.map((p) => `${p.path} is missing (install it: ${p.install})`).join('; ');
  return { run: false, fail: ci, message: ci ? `${what}; CI=true requires it` : `${what}; skipping the tests that need it (with CI=true this fails)` };
}

const printed = new Set<string>();

/** Prints `line` once per test process, as one plain line (console.warn would add a stack). */
function note(line: string): void {
  if (printed.has(line)) return;
  printed.add(line);
  process.stderr.write(`${line}\n`);
}

/**
 * For a single test: true when `program` is there; otherwise prints the one line and returns
 * false, or throws under `CI=true`. `if (!requireProgram(CHROMIUM)) return;` at the top of a test
 * body skips only that test's work (prefer {@link describeWith}, which shows the skip in jest).
 */
export function requireProgram(program: SystemProgram, env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  const check = checkPrograms([program], env);
  if (check.fail) throw new Error(check.message);
  if (!check.run) note(check.message);
  return check.run;
}

/**
 * `describe` for tests that need system programs. All present: a plain `describe`. One missing:
 * outside CI the suite is skipped (the one allowed skip: an optional system program on a machine
 * that has only Node; jest's global setup printed the one line per missing program naming what to
 * install); with `CI=true` the suite is one failing test with that message instead.
 */
export function describeWith(programs: SystemProgram | readonly SystemProgram[], name: string, body: () => void): void {
  const check = checkPrograms(Array.isArray(programs) ? programs : [programs as SystemProgram]);
  if (check.run) {
    describe(name, body);
  } else if (check.fail) {
    describe(name, () => {
      it('should find the system programs it needs', () => {
        throw new Error(check.message);
      });
    });
  } else {
    describe.skip(name, body);
  }
}
