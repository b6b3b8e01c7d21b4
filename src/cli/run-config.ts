import { JsonlConsumer } from '../consumers/jsonl/jsonl.consumer.js';
import { TerminalConsumer } from '../consumers/terminal/terminal.consumer.js';
import { readConfigFile } from '../core/config/read-config-file.js';
import type { EventConsumer } from '../core/plugin/event-consumer.js';
import type { ConfirmTool } from '../core/session/session-options.js';
import type { ContainerModule } from '../core/util/inversify.js';
import { demoToolsModule, readFileRootModule } from '../plugins/tools/tools.module.js';
import type { CliIo } from './cli-io.js';
import { pathFrom } from './flags.js';

/** The flags that override the config file's provider, model and base URL (`run`). */
export interface ConfigFlags {
  provider?: string;
  model?: string;
  baseUrl?: string;
  /** `--api <api>`: the Local loop's model API (`providers.local.api`). */
  api?: string;
}

/**
 * The config file of `--config`, read by the library's reader: it locates a JSON syntax error by
 * position, line and column and never quotes the file text (V8's parse message does, and the text
 * around the error may be an API key).
 */
export async function readConfig(path: string, io: CliIo): Promise<Record<string, unknown>> {
  return (await readConfigFile(pathFrom(io.cwd, path))) as Record<string, unknown>;
}

/**
 * A config section to spread a flag's field into. The file is not validated yet (`AgentRx.create`
 * does it, listing every problem), so a malformed section is spread as it is, and reported there.
 */
export function sectionOf(value: unknown): Record<string, unknown> {
  return (value ?? {}) as Record<string, unknown>;
}

/** Applies --provider/--model/--base-url on top of the file config (a copy; `base` is left as it is). */
export function mergeConfig(base: Record<string, unknown>, flags: ConfigFlags): Record<string, unknown> {
  const config = structuredClone(base);
  if (flags.provider) config['provider'] = flags.provider;
  const provider = String(config['provider'] ?? 'local');
  if (flags.model) config['agent'] = { ...sectionOf(config['agent']), model: flags.model };
  if (flags.baseUrl) {
    const providers = { ...sectionOf(config['providers']) };
    providers[provider] = { ...sectionOf(providers[provider]), baseUrl: flags.baseUrl };
    config['providers'] = providers;
  }
  if (flags.api) {
    const providers = { ...sectionOf(config['providers']) };
    providers['local'] = { ...sectionOf(providers['local']), api: flags.api };
    config['providers'] = providers;
  }
  return config;
}

/** The consumers that print a run: JSON lines with `--json` (or `consumers.jsonl`), else the terminal renderer unless `consumers.terminal` is false. */
export function consumersFor(json: boolean, config: Record<string, unknown>, io: CliIo): EventConsumer[] {
  const consumers = (config['consumers'] ?? {}) as { terminal?: boolean; jsonl?: boolean };
  if (json || consumers.jsonl === true) return [new JsonlConsumer(io.out)];
  return consumers.terminal === false ? [] : [new TerminalConsumer({ out: io.out })];
}

/**
 * The demo tools' module when asked for (`demo`, `serve --demo`, `--demo-tools`), else none;
 * `read_file` reads from `cwd`, the invocation's working directory (`CliIo.cwd`).
 */
export function demoTools(on: boolean | undefined, cwd: string): ContainerModule[] {
  return on === true ? [readFileRootModule(cwd), demoToolsModule] : [];
}

/** The `confirmTool` of `--confirm allow|deny`: the same decision for every request. */
export function confirmFlag(decision: 'allow' | 'deny'): ConfirmTool {
  return () => ({ allow: decision === 'allow', denyMessage: 'denied from the agentrx command line (--confirm deny)' });
}
