/**
 * The README's `json` and `sh` blocks, which the packed-package test does not run: every config
 * in a `json` block (one object per block, or one per line) is valid for the default modules, and
 * every `agentrx` command line of an `sh` block names a command and options that exist.
 */
import { readFileSync } from 'node:fs';
import { ConfigSections } from '../../src/core/config/config-tokens.js';
import { validateConfig } from '../../src/core/config/load-config.js';
import type { ConfigSection } from '../../src/core/config/config-section.js';
import { StoreRegistration } from '../../src/core/store/store-registration.js';
import { Container } from '../../src/core/util/inversify.js';
import { BUILTIN_PROVIDER_IDS, defaultModules } from '../../src/default-modules.js';
import { coreStores } from '../../src/core/store/core-stores.js';
import { Writable } from 'node:stream';
import { runCli } from '../../src/cli/cli.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The bodies of the README's fenced blocks of `lang`, with the line each starts on. */
function blocks(lang: string): { line: number; body: string }[] {
  const out: { line: number; body: string }[] = [];
  const lines = README.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```' + lang) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end] !== '```') end++;
    out.push({ line: start + 1, body: lines.slice(start, end).join('\n') });
    i = end;
  }
  return out;
}

/** The configs of a `json` block: the block as one value, else one per non-empty line. */
function configsOf(body: string): unknown[] {
  try {
    return [JSON.parse(body)];
  } catch {
    return body
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as unknown);
  }
}

const isConfig = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !('compilerOptions' in v);

describe('README', () => {
  const container = new Container();
  container.load(...defaultModules());
  const sections = container.getAll<ConfigSection>(ConfigSections);
  const stores = [...coreStores, ...container.getAll<StoreRegistration>(StoreRegistration)];

  describe('each config of a json block', () => {
    const configs = blocks('json').flatMap(({ line, body }) =>
      configsOf(body)
        .filter(isConfig)
        .map((config) => ({ line, config })),
    );

    it('should be found (the blocks hold configs)', () => {
      expect(configs.length).toBeGreaterThanOrEqual(4);
    });

    it.each(configs.map((c) => [c.line, c.config]))('should be valid for the default modules (block at line %i)', (_line, config) => {
      const env = { TRACKER_TOKEN: 'token', OPENAI_API_KEY: 'key', ANTHROPIC_API_KEY: 'key', GEMINI_API_KEY: 'key' };
      expect(() => validateConfig(config, sections, env, [...BUILTIN_PROVIDER_IDS], stores)).not.toThrow();
    });
  });

  describe('each agentrx command line of an sh block', () => {
    const commands = blocks('sh')
      .flatMap(({ body }) => body.split('\n'))
      .map((l) => l.replace(/#.*$/, '').trim())
      .filter((l) => l.startsWith('agentrx '));

    it('should be found', () => {
      expect(commands.length).toBeGreaterThanOrEqual(6);
    });

    it.each(commands)('should name a command and options that exist: %s', async (line) => {
      // Quoted arguments (a prompt, an MCP server's own command line) are not agentrx's options.
      const words = line
        .replace(/'[^']*'|"[^"]*"/g, 'ARG')
        .split(/\s+/)
        .slice(1);
      const plain = (w: string | undefined): w is string => w !== undefined && /^[a-z][a-z-]*$/.test(w);
      const path = plain(words[1]) ? [words[0]!, words[1]] : [words[0]!];
      const help = await helpOf(path);
      expect(help.code).toBe(0);
      const flags = words
        .flatMap((w) => w.replace(/^\[/, '').split('|'))
        .filter((w) => /^--?[a-z]/.test(w))
        .map((w) => w.replace(/[\]=].*$/, ''));
      expect(flags.filter((f) => !new RegExp(`(^|[\\s,])${f}\\b`).test(help.text))).toEqual([]);
    });
  });
});

/** What `agentrx <path…> --help` prints, and its exit code (a subcommand word that is none prints the command's help). */
async function helpOf(path: readonly string[]): Promise<{ code: number; text: string }> {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  const code = await runCli(['node', 'agentrx', ...path, '--help'], { out: sink, err: sink, env: {}, cwd: process.cwd() });
  return { code, text };
}
