import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/cli.js';
import { tempDir } from '../support/temp-dir.js';

const golden = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'fixtures', 'demo-output.golden.txt');

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

describe('agentrx demo (non-TTY)', () => {
  describe('when run twice with the default prompt', () => {
    it('should print the golden output, timings masked', async () => {
      const dir = await tempDir('agentrx-golden-');
      await writeFile(join(dir, 'README.md'), '# A fixed readme for the golden test\n\nSecond line.\n');
      const cwd = process.cwd();
      process.chdir(dir);
      try {
        const outputs: string[] = [];
        for (let i = 0; i < 2; i++) {
          const out = new PassThrough();
          let text = '';
          out.on('data', (c: Buffer) => (text += c.toString()));
          expect(await runCli(['node', 'agentrx', 'demo'], { out, err: new PassThrough(), env: { NO_COLOR: '1' }, cwd: dir })).toBe(0);
          outputs.push(mask(text));
        }
        expect(outputs[1]).toBe(outputs[0]);
        if (process.env['UPDATE_GOLDEN'] === '1') await writeFile(golden, outputs[0]!);
        expect(outputs[0]).toBe(await readFile(golden, 'utf8'));
      } finally {
        process.chdir(cwd);
      }
    });
  });
});
