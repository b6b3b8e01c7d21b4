import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/cli.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * The golden files are regenerated with `UPDATE_GOLDEN=1` (then read the diff):
 * `UPDATE_GOLDEN=1 NODE_OPTIONS=--experimental-vm-modules npx jest test/cli/demo-golden.int.spec.ts`.
 */
const fixtures = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'fixtures');

/** Masks what legitimately changes between runs: clock readings and durations. */
function mask(out: string): string {
  return out
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d/g, '<ISO>')
    .replace(/[A-Z][a-z]+day, [A-Z][a-z]+ \d{1,2}, \d{4} at \d{1,2}:\d\d:\d\d [AP]M [A-Z]+/g, '<DATE>')
    .replace(/"timeZone":"[^"]+"/g, '"timeZone":"<TZ>"')
    .replace(/"formatted":"[^"…]*(…|")/g, (_m, end: string) => `"formatted":"<DATE>${end}`)
    .replace(/tokens \d+ in \/ \d+ out/g, 'tokens <N> in / <N> out')
    .replace(/ \d+\.\ds$/gm, ' <T>s');
}

/**
 * Runs `agentrx demo <args>` twice with a folder holding a fixed README.md as its working
 * directory (`cwd`: `read_file` reads there; the process's own stays put); the masked stdout of
 * both, and the stderr of the first.
 */
async function demoTwice(args: readonly string[]): Promise<{ outputs: string[]; stderr: string }> {
  const dir = await tempDir('agentrx-golden-');
  await writeFile(join(dir, 'README.md'), '# A fixed readme for the golden test\n\nSecond line.\n');
  const outputs: string[] = [];
  let stderr = '';
  for (let i = 0; i < 2; i++) {
    const out = new PassThrough();
    const err = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => (text += c.toString()));
    if (i === 0) err.on('data', (c: Buffer) => (stderr += c.toString()));
    expect(await runCli(['node', 'agentrx', 'demo', ...args], { out, err, env: { NO_COLOR: '1' }, cwd: dir })).toBe(0);
    outputs.push(mask(text));
  }
  return { outputs, stderr };
}

/**
 * Each test runs the whole demo twice in this process (a model emulator, an AgentRx instance and
 * a session each time): in a run of the whole suite with two CPU hogs beside it, the first test
 * took more than jest's default 15 s (the file 27 s).
 */
const TWO_DEMOS_MS = 60_000;

/** Compares `output` with the golden file `name` (first writing it under UPDATE_GOLDEN=1). */
async function expectGolden(output: string, name: string): Promise<void> {
  const golden = join(fixtures, name);
  if (process.env['UPDATE_GOLDEN'] === '1') await writeFile(golden, output);
  expect(output).toBe(await readFile(golden, 'utf8'));
}

const TODO_AND_EMAIL = 'Add a todo: buy milk. Then send an email to bob@example.com about the launch';

describe('agentrx demo (non-TTY)', () => {
  describe('when run twice with the default prompt', () => {
    it(
      'should print the golden output, timings masked',
      async () => {
        const { outputs } = await demoTwice([]);
        expect(outputs[1]).toBe(outputs[0]);
        await expectGolden(outputs[0]!, 'demo-output.golden.txt');
      },
      TWO_DEMOS_MS,
    );
  });

  describe('when run twice asking for a todo and an e-mail, without --confirm', () => {
    it(
      'should add the todo, deny the e-mail (saying how to allow it) and print the golden output',
      async () => {
        const { outputs, stderr } = await demoTwice([TODO_AND_EMAIL]);
        expect(outputs[1]).toBe(outputs[0]);
        expect(stderr).toContain('agentrx demo: send_email needs approval; denied (pass --confirm allow to let it run)');
        await expectGolden(outputs[0]!, 'demo-output-todo-email-denied.golden.txt');
      },
      TWO_DEMOS_MS,
    );
  });

  describe('when run twice asking for a todo and an e-mail, with --confirm allow', () => {
    it(
      'should run both tools and print the golden output',
      async () => {
        const { outputs, stderr } = await demoTwice([TODO_AND_EMAIL, '--confirm', 'allow']);
        expect(outputs[1]).toBe(outputs[0]);
        expect(stderr).toContain('agentrx demo: send_email needs approval; allowed (--confirm allow)');
        await expectGolden(outputs[0]!, 'demo-output-todo-email-allowed.golden.txt');
      },
      TWO_DEMOS_MS,
    );
  });
});
