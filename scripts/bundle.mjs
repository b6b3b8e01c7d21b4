// The second step of `npm run build`: tsc has emitted one module per source file into .build/tsc
// (with the decorator metadata esbuild cannot emit); this bundles them into dist/ as a few ES
// modules, because loading ~500 small modules (ours and inversify's) was most of the package's
// import time. Declarations are copied beside the bundles.
//
// - Entries: the package's exports, the CLI, and the internal modules the proof fixtures import.
//   Shared code goes to dist/chunks/ (code splitting), so every entry sees one copy of each class,
//   token and registry; each dynamic import() (a CLI command, an optional capability) is its own
//   chunk and loads when it runs.
// - Then fewer files: esbuild cuts the shared code into one chunk per set of entries that use it
//   (49 files at `import('agentrx')`), and Node's loader pays per file. Rollup merges the chunks
//   the index loads at import into one `core` chunk, those the CLI's bin loads into `cli-core` and
//   those its `--help` adds into `cli-shared` (which `core` then imports, so `agentrx --version`
//   and `--help` stay small); what loads later keeps its chunks. Source maps are chained through
//   both steps to the TypeScript sources.
// - Bundled packages: inversify and @inversifyjs/* only (hundreds of small modules; inversify 8
//   keeps its state in reflect metadata under string keys and Symbol.for, so a user's own
//   `inversify` import interoperates). Every other package stays an import: hosts' `instanceof`
//   checks (AxiosError, rxjs) and single copies (reflect-metadata, class-validator) hold. The
//   bundled inversify's own `import 'reflect-metadata/lite'` is pointed at
//   src/core/util/reflect-metadata.ts, which loads it by require as the sources do (no ES import
//   of a CommonJS package at import time).
// - Skipped when neither the inputs nor the entries in dist/ changed since the last bundle (jest
//   workers build at once).
import { build } from 'esbuild';
import { rollup } from 'rollup';
import { parseAst } from 'rollup/parseAst';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nameHelperDefinition, nameHelperImports, unnameClosures } from './bundle-names.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const IN = join(ROOT, '.build/tsc');
const OUT = join(ROOT, 'dist');
const STAMP = join(OUT, '.bundle-stamp');
const ENTRIES = [
  'index',
  'testing/index',
  'distributed/index',
  'nest/index',
  'cli/main',
  // Imported by the proof fixtures (test/proof/fixtures), which run the built package.
  'distributed/session-worker',
  'distributed/redis-store/redis-session-store',
  'core/store/file/journal-io',
];
const BUNDLED = /^(inversify|@inversifyjs\/)/;
const REFLECT = join(IN, 'core/util/reflect-metadata.js');

function files(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name));
}

/** A digest of the inputs (path, size, mtime) and of this script and bundle-names.mjs. */
function stampOf(inputs) {
  const h = createHash('sha256').update(readFileSync(fileURLToPath(import.meta.url))).update(readFileSync(fileURLToPath(new URL('./bundle-names.mjs', import.meta.url))));
  for (const f of inputs.sort()) {
    const s = statSync(f);
    h.update(`${relative(IN, f)}\0${s.size}\0${s.mtimeMs}\n`);
  }
  return h.digest('hex');
}

/** The entries as they are in dist/ (size, mtime): another writer there (a plain tsc run) shows. */
function outputsOf() {
  return ENTRIES.map((e) => {
    const f = join(OUT, `${e}.js`);
    return existsSync(f) ? `${e}\0${statSync(f).size}\0${statSync(f).mtimeMs}` : `${e}\0missing`;
  }).join('\n');
}

const inputs = files(IN).filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'));
const stamp = stampOf(inputs);
if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === `${stamp}\n${outputsOf()}`) process.exit(0);

const split = join(ROOT, `.build/split-${process.pid}`);
const staging = join(ROOT, `.build/bundle-${process.pid}`);
rmSync(split, { recursive: true, force: true });
rmSync(staging, { recursive: true, force: true });
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: Object.fromEntries(ENTRIES.map((e) => [e, join(IN, `${e}.js`)])),
  outdir: split,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  // Minified (less source for V8 to parse at import and at each function's first call); the
  // names of classes and top-level functions are kept (`constructor.name`, messages, stack
  // traces; not those of closures made inside functions: see bundle-names.mjs), and the source
  // maps lead back to the TypeScript.
  keepNames: true,
  minifyWhitespace: true,
  minifySyntax: true,
  minifyIdentifiers: true,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
  plugins: [
    {
      name: 'packages-external-but-inversify',
      setup(b) {
        // inversify's `import 'reflect-metadata/lite'` goes to the module that loads it by require.
        b.onResolve({ filter: /^reflect-metadata(\/lite)?$/ }, () => ({ path: REFLECT }));
        b.onResolve({ filter: /^[^./]/ }, (args) => (BUNDLED.test(args.path) ? undefined : { path: args.path, external: true }));
      },
    },
  ],
});
await merge();
for (const f of inputs.filter((f) => f.endsWith('.d.ts'))) {
  const to = join(staging, relative(IN, f));
  mkdirSync(dirname(to), { recursive: true });
  cpSync(f, to);
}

// Into place: each file by rename (a reader sees the old or the new file, never half of one),
// then what this build did not write goes.
const written = new Set(files(staging).map((f) => relative(staging, f)));
for (const rel of written) {
  mkdirSync(dirname(join(OUT, rel)), { recursive: true });
  renameSync(join(staging, rel), join(OUT, rel));
}
rmSync(staging, { recursive: true, force: true });
rmSync(split, { recursive: true, force: true });
if (existsSync(OUT)) {
  for (const f of files(OUT)) if (!written.has(relative(OUT, f)) && f !== STAMP) rmSync(f);
}
writeFileSync(STAMP, `${stamp}\n${outputsOf()}`);
const bytes = [...written].reduce((n, rel) => n + statSync(join(OUT, rel)).size, 0);
console.log(`bundled ${ENTRIES.length} entries into dist/ (${written.size} files, ${(bytes / 1024).toFixed(0)} KiB with maps and declarations)`);

/** The esbuild outputs (relative to ROOT) `roots` load by static imports, and the targets of their dynamic imports. */
function closureOf(roots) {
  const seen = new Set();
  const dynamic = new Set();
  const visit = (out) => {
    if (seen.has(out)) return;
    seen.add(out);
    for (const i of result.metafile.outputs[out]?.imports ?? []) {
      if (i.external) continue;
      if (i.kind === 'import-statement') visit(i.path);
      else if (i.kind === 'dynamic-import') dynamic.add(i.path);
    }
  };
  for (const r of roots) visit(r);
  return { files: new Set([...seen].map((out) => join(ROOT, out))), dynamic: [...dynamic] };
}

/** The esbuild output that defines keepNames' helper: its file, local name and export names. */
function nameHelper() {
  for (const out of Object.keys(result.metafile.outputs)) {
    if (!out.endsWith('.js')) continue;
    const file = join(ROOT, out);
    const code = readFileSync(file, 'utf8');
    if (!code.includes('"name"')) continue;
    const def = nameHelperDefinition(parseAst(code));
    if (def !== undefined) return { file, ...def };
  }
  throw new Error("bundle: esbuild's keepNames helper was not found in its output (has its shape changed? see scripts/bundle-names.mjs)");
}

/**
 * esbuild's output (`split`) into `staging`, maps chained. Merged: the chunks the CLI's bin loads
 * (`cli-core`); those its commands' declarations and `--help` load, with what `import('agentrx')`
 * shares with them (`cli-shared`); the rest of what `import('agentrx')` loads (`core`).
 */
async function merge() {
  const entryOut = (e) => relative(ROOT, join(split, `${e}.js`));
  const bin = closureOf([entryOut('cli/main')]);
  const commands = closureOf(bin.dynamic).files;
  const index = closureOf([entryOut('index')]).files;
  const chunkOf = (id) => {
    if (!id.startsWith(join(split, 'chunks'))) return undefined;
    if (bin.files.has(id)) return 'cli-core';
    if (!index.has(id)) return undefined;
    return commands.has(id) ? 'cli-shared' : 'core';
  };
  const helper = nameHelper();
  const bundle = await rollup({
    input: Object.fromEntries(ENTRIES.map((e) => [e, join(split, `${e}.js`)])),
    external: (id) => !id.startsWith('.') && !id.startsWith('/'),
    preserveEntrySignatures: 'strict',
    treeshake: false,
    onwarn(w, warn) {
      if (w.code !== 'CIRCULAR_DEPENDENCY') warn(w);
    },
    plugins: [
      {
        name: 'esbuild-source-maps',
        load(id) {
          const code = readFileSync(id, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
          return { code, map: existsSync(`${id}.map`) ? readFileSync(`${id}.map`, 'utf8') : null };
        },
      },
      {
        name: 'closures-unnamed',
        transform(code, id) {
          const ast = this.parse(code);
          const helpers = id === helper.file ? [helper.local] : nameHelperImports(ast, (from) => resolve(dirname(id), from) === helper.file, helper.exported);
          return unnameClosures(code, ast, helpers, id);
        },
      },
    ],
  });
  await bundle.write({
    dir: staging,
    format: 'es',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    manualChunks: chunkOf,
    sourcemap: true,
    // Paths as seen from the map's place in dist/, not in the staging folder.
    sourcemapPathTransform: (rel, mapPath) => relative(dirname(join(OUT, relative(staging, mapPath))), resolve(dirname(mapPath), rel)),
  });
  await bundle.close();
}
