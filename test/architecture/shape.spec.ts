import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * The shape limits of src/ (issue 25): small files with one responsibility, a Session that reads
 * like a run loop, and no double casts that hide a type the code does not know.
 */

const SRC = join(process.cwd(), 'src');
const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.split('\\').join('/'));
const linesOf = (file: string): number => readFileSync(join(SRC, file), 'utf8').split('\n').length - 1;

describe('the shape of src/', () => {
  it('reads the source files', () => {
    expect(files).toContain('core/session/session.ts');
  });

  it('has no file over 400 lines outside src/testing/', () => {
    const long = files.filter((f) => !f.startsWith('testing/') && linesOf(f) > 400).map((f) => `src/${f}: ${linesOf(f)} lines`);
    expect(long).toEqual([]);
  });

  it('keeps the Session within 350 lines', () => {
    expect(linesOf('core/session/session.ts')).toBeLessThanOrEqual(350);
  });

  it('has no `as unknown as` double cast', () => {
    const casts = files.filter((f) => /\bas unknown as\b/.test(readFileSync(join(SRC, f), 'utf8'))).map((f) => `src/${f}`);
    expect(casts).toEqual([]);
  });
});
