import { copyFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, stop } from 'esbuild';

/** The repository's root folder. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The CopilotKit example app's folder. */
export const EXAMPLE_DIR = join(REPO_ROOT, 'examples', 'copilotkit');

/**
 * Bundles the example app into `outDir` for the browser, as its README does, minified and with
 * production React: `main.js` (code split, so the chat's lazily loaded renderers stay out of the
 * first load), `main.css`, and the app's `index.html` beside them. The fonts of the markdown math
 * renderer are left out (the example shows no math).
 */
export async function bundleExample(outDir: string): Promise<void> {
  try {
    await build({
      absWorkingDir: REPO_ROOT,
      entryPoints: [join(EXAMPLE_DIR, 'main.tsx')],
      outdir: outDir,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      jsx: 'automatic',
      minify: true,
      define: { 'process.env.NODE_ENV': '"production"' },
      loader: { '.woff': 'empty', '.woff2': 'empty', '.ttf': 'empty' },
      logLevel: 'silent',
    });
  } finally {
    // The esbuild service is a child process: stop it so that it does not outlive the bundle.
    await stop();
  }
  await copyFile(join(EXAMPLE_DIR, 'index.html'), join(outDir, 'index.html'));
}
