import { existsSync, readFileSync } from 'node:fs';

/**
 * The system programs some tests need (test/support/system-programs.json, also read by
 * system-program.ts) that this machine lacks, as one line each: what is missing, how to install
 * it, and that its tests are skipped (or, with `CI=true`, fail).
 */
export function missingProgramLines(programs, env = process.env, exists = existsSync) {
  const ci = env.CI === 'true';
  return Object.values(programs)
    .filter((p) => !exists(p.path))
    .map(
      (p) =>
        `${p.path} is missing (install it: ${p.install}); ${ci ? 'CI=true requires it: the tests that need it fail' : 'skipping the tests that need it (with CI=true this fails)'}`,
    );
}

/** Jest's global setup: prints those lines once per run (the suites that need a program skip silently). */
export default function globalSetup() {
  const programs = JSON.parse(readFileSync(new URL('./support/system-programs.json', import.meta.url), 'utf8'));
  for (const line of missingProgramLines(programs)) process.stderr.write(`${line}\n`);
}
