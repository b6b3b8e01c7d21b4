import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './packed-package.js';

/**
 * The README's code samples. Every ```ts and ```js block of README.md follows a marker line
 * `<!-- sample: <name> -->` (or `<!-- sample: <name> fragment: <why> -->` for a part of a larger
 * program that is run elsewhere, the reason saying where): the test of the packed package runs
 * each sample by its name, and fails for a block without a marker or a marked sample it does not
 * know. The text is the block as the README prints it, so what a user copies is what runs.
 */
export interface ReadmeSample {
  readonly name: string;
  readonly lang: 'ts' | 'js';
  readonly code: string;
  /** The line of the opening fence (1-based), for messages. */
  readonly line: number;
  /** Set for a fragment: why it is not run here as a whole program. */
  readonly fragment?: string;
}

/** Every ts/js block of the README with its marker; a block without one is an error naming its line. */
export function readmeSamples(readme = readFileSync(join(REPO, 'README.md'), 'utf8')): ReadmeSample[] {
  const lines = readme.split('\n');
  const samples: ReadmeSample[] = [];
  const unmarked: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(ts|js)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const close = lines.indexOf('```', i + 1);
    if (close < 0) throw new Error(`README.md:${i + 1}: a code block without its closing fence`);
    const marker = /^<!-- sample: ([a-z0-9-]+)(?: fragment: (.+?))? -->$/.exec(lines[i - 1] ?? '');
    if (!marker) unmarked.push(i + 1);
    else
      samples.push({
        name: marker[1]!,
        lang: open[1] as 'ts' | 'js',
        code: `${lines.slice(i + 1, close).join('\n')}\n`,
        line: i + 1,
        ...(marker[2] ? { fragment: marker[2] } : {}),
      });
    i = close;
  }
  if (unmarked.length > 0) throw new Error(`README.md: code blocks without a <!-- sample: name --> marker at lines ${unmarked.join(', ')}`);
  return samples;
}
