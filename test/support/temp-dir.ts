/**
 * Temporary folders for tests, removed whether the test passes or fails, so `npm test` leaves
 * nothing under `os.tmpdir()` (leftovers also make the file-store benches noisy).
 *
 * `tempDir(prefix)` (or `tempDirSync`) makes a fresh folder `<os.tmpdir()>/<prefix>XXXXXX` and
 * registers it for `rm -rf`:
 * - `scope: 'test'` (the default): after the current test (jest `afterEach`). For a folder made in
 *   a test or a `beforeEach`.
 * - `scope: 'file'`: after the last test of the file (jest `afterAll`). For a folder made in a
 *   `beforeAll` (or a fixture that outlives a test) and shared by several tests.
 *
 * Importing this module registers those two hooks once per test file, at its top level. They run
 * after the hooks of every `describe` block, so close servers, stores and child processes that
 * write into the folder in a `describe`'s `afterEach`/`afterAll`: a hook at the file's top level
 * (declared after this import) runs after the folder is gone. A removal that fails fails the test.
 * Outside jest (a bench or a child process importing a fixture) nothing is registered, and the
 * caller removes its folders itself.
 */
import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** When a folder of {@link tempDir} is removed: after the current test, or after the file's last test. */
export type TempDirScope = 'test' | 'file';

/** Options of {@link tempDir} and {@link tempDirSync}. */
export interface TempDirOptions {
  /** `'test'` (default): removed after the current test; `'file'`: after the last test of the file. */
  readonly scope?: TempDirScope;
}

const pending: Record<TempDirScope, Set<string>> = { test: new Set(), file: new Set() };

/** Removes every folder of `dirs` (all of them, even when one fails), then throws the first failure. */
async function removeAll(dirs: Set<string>): Promise<void> {
  const list = [...dirs];
  dirs.clear();
  const results = await Promise.allSettled(list.map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 3 })));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

// `typeof`: no ReferenceError when imported outside jest.
if (typeof afterEach === 'function' && typeof afterAll === 'function') {
  afterEach(() => removeAll(pending.test));
  afterAll(async () => {
    // A 'test' folder made in a beforeAll of a block whose tests never ran is still here.
    await removeAll(pending.test);
    await removeAll(pending.file);
  });
}

/** Makes a fresh folder `<os.tmpdir()>/<prefix>XXXXXX`, removed after the current test (or file: `scope`). */
export async function tempDir(prefix: string, options: TempDirOptions = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  pending[options.scope ?? 'test'].add(dir);
  return dir;
}

/** {@link tempDir}, synchronous (for constructors, field initializers and sync hooks). */
export function tempDirSync(prefix: string, options: TempDirOptions = {}): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  pending[options.scope ?? 'test'].add(dir);
  return dir;
}
