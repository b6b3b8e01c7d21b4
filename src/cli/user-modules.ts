import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentRxCreateOptions } from '../agentrx.js';
import { AgentRxError } from '../core/errors.js';

/** What the `agentrx` command adds to `AgentRx.create` from the user's ES modules. */
export interface UserPlugins {
  readonly tools: NonNullable<AgentRxCreateOptions['tools']>[number][];
  readonly modules: NonNullable<AgentRxCreateOptions['modules']>[number][];
  readonly consumers: NonNullable<AgentRxCreateOptions['consumers']>[number][];
}

const KINDS = ['tools', 'modules', 'consumers'] as const;

/**
 * The user's plugins for a command: the ES modules named by `--module <file>` (relative to the
 * working folder) and by the config's `modules` (relative to the config file's folder), in that
 * order. Each module exports `tools`, `modules` and/or `consumers` (arrays, as `AgentRx.create`
 * takes them), named or on its default export. A missing file, a module that fails to load or
 * one that exports none of the three is `invalid_options` naming the file.
 */
export async function loadUserPlugins(
  flagFiles: readonly string[],
  config: Record<string, unknown>,
  configFile: string | undefined,
  cwd: string,
): Promise<UserPlugins> {
  const fromConfig = Array.isArray(config['modules']) ? config['modules'].filter((f): f is string => typeof f === 'string') : [];
  const base = configFile !== undefined ? dirname(isAbsolute(configFile) ? configFile : resolve(cwd, configFile)) : cwd;
  const files = [...flagFiles.map((f) => resolve(cwd, f)), ...fromConfig.map((f) => resolve(base, f))];
  const out: UserPlugins = { tools: [], modules: [], consumers: [] };
  for (const file of files) {
    if (!existsSync(file))
      throw new AgentRxError(
        'invalid_options',
        `module ${file} does not exist (--module or the config's "modules" name ES module files exporting tools, modules or consumers)`,
      );
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (e) {
      throw new AgentRxError('invalid_options', `module ${file} failed to load: ${e instanceof Error ? e.message : String(e)}`);
    }
    const def = typeof mod['default'] === 'object' && mod['default'] !== null ? (mod['default'] as Record<string, unknown>) : {};
    let found = false;
    for (const kind of KINDS) {
      const value = mod[kind] ?? def[kind];
      if (value === undefined) continue;
      if (!Array.isArray(value)) throw new AgentRxError('invalid_options', `module ${file}: its export "${kind}" must be an array`);
      (out[kind] as unknown[]).push(...(value as unknown[]));
      found = true;
    }
    if (!found)
      throw new AgentRxError('invalid_options', `module ${file} exports none of tools, modules, consumers (e.g. export const tools = [defineTool({ … })])`);
  }
  return out;
}
