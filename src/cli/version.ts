import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's version (`agentrx --version`): the nearest package.json named agentrx above this module (in src/, or in dist/ where the build bundled it). */
export function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'agentrx' && pkg.version !== undefined) return pkg.version;
    } catch {
      // not here: one folder up
    }
  }
  return '0.0.0';
}
