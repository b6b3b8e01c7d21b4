import { readFile } from 'node:fs/promises';
import { AgentRx } from '../../agentrx.js';
import { AgentRxError } from '../../core/errors.js';
import type { ConsumerContext, EventConsumer } from '../../core/plugin/event-consumer.js';
import { exportCassette, writeCassette } from '../../core/store/cassette.js';
import type { CliIo } from '../cli-io.js';
import { EXIT_FAILED, EXIT_OK } from '../exit-codes.js';
import { integerFlag, pathFrom } from '../flags.js';
import { mcpProgressTo, withMcpFlags } from '../mcp-flags.js';
import { report } from '../report.js';
import { confirmFlag, consumersFor, demoTools, mergeConfig, readConfig } from '../run-config.js';
import { openRunStore, storeModule, type RunStore } from '../run-store.js';
import { loadUserPlugins } from '../user-modules.js';
import type { RunFlags } from './run.js';
/**
 * Runs `prompt` with the config file and flags; then, even after a failure, records the session
 * (`--record`) and says how to resume it. Exit code 1 for a terminated run, else that of the failure.
 */
export async function runCommand(prompt: string, flags: RunFlags, io: CliIo): Promise<number> {
  let rx: AgentRx | undefined;
  let runStore: RunStore | undefined;
  const probe = new SessionIdProbe();
  let code: number;
  try {
    const timeoutMs = integerFlag('--timeout', flags.timeout, 1);
    const maxTurns = integerFlag('--max-turns', flags.maxTurns, 1);
    const base = flags.config ? await readConfig(flags.config, io) : {};
    runStore = openRunStore(base, flags, io);
    let provider = flags.provider;
    if (flags.resume !== undefined) {
      const record = runStore ? await runStore.store.load(flags.resume) : undefined;
      if (!record)
        throw new AgentRxError('store_error', `no session '${flags.resume}' in ${runStore?.where ?? 'the store'} to resume (agentrx sessions ls lists them)`, {
          sessionId: flags.resume,
        });
      const chosen = provider ?? (typeof base['provider'] === 'string' ? base['provider'] : undefined);
      if (chosen !== undefined && chosen !== record.provider)
        throw new AgentRxError('invalid_options', `session '${flags.resume}' ran on provider '${record.provider}'; it cannot be resumed with '${chosen}'`);
      provider = record.provider;
    }
    const config = withMcpFlags(mergeConfig(base, { ...flags, provider }), flags.mcp ?? []);
    const user = await loadUserPlugins(flags.module ?? [], base, flags.config, io.cwd);
    const modules = [...demoTools(flags.demoTools, io.cwd), ...user.modules, ...(runStore ? [storeModule(runStore)] : []), mcpProgressTo(io.err)];
    rx = await AgentRx.create({
      config,
      env: io.env,
      modules,
      tools: user.tools,
      consumers: [...user.consumers, ...consumersFor(flags.json === true, config, io), probe],
      handleSignals: true,
    });
    const result = await rx.run({
      prompt,
      timeoutMs,
      maxTurns,
      ...(await runSettingFlags(flags, io)),
      ...(flags.resume !== undefined ? { sessionId: flags.resume } : {}),
      ...(flags.confirm ? { confirmTool: confirmFlag(flags.confirm) } : {}),
    });
    probe.sessionId ??= result.sessionId;
    code = result.terminal === 'terminated' ? EXIT_FAILED : EXIT_OK;
  } catch (e) {
    code = report(e, io, flags.baseUrl);
  }
  try {
    const sessionId = probe.sessionId;
    if (flags.record !== undefined && runStore && sessionId !== undefined) {
      const cassette = await exportCassette(runStore.store, sessionId);
      await writeCassette(pathFrom(io.cwd, flags.record), cassette);
      io.err.write(`agentrx: session ${sessionId} recorded to ${flags.record} (${cassette.envelopes.length} events; agentrx replay ${flags.record})\n`);
    } else if (flags.record !== undefined) {
      io.err.write(`agentrx: nothing recorded to ${flags.record}: the session never opened\n`);
    }
    if (runStore?.durable && sessionId !== undefined)
      io.err.write(`agentrx: session ${sessionId} is in ${runStore.where}; continue it with: agentrx run --resume ${sessionId} "<prompt>"\n`);
  } catch (e) {
    code = Math.max(code, report(e, io, undefined));
  } finally {
    await rx?.stop();
  }
  return code;
}

/** The run's own settings from `--instructions`, `--temperature` and `--output-schema` (read and parsed here, validated by `run`). */
async function runSettingFlags(flags: RunFlags, io: CliIo): Promise<{ instructions?: string; temperature?: number; outputSchema?: Record<string, unknown> }> {
  const out: { instructions?: string; temperature?: number; outputSchema?: Record<string, unknown> } = {};
  if (flags.instructions !== undefined) out.instructions = flags.instructions;
  if (flags.temperature !== undefined) {
    const t = /^\s*\d+(\.\d+)?\s*$/.test(flags.temperature) ? Number(flags.temperature) : Number.NaN;
    if (!(t >= 0 && t <= 2)) throw new AgentRxError('invalid_options', `--temperature takes a number from 0 to 2; got ${JSON.stringify(flags.temperature)}`);
    out.temperature = t;
  }
  if (flags.outputSchema !== undefined) {
    const file = pathFrom(io.cwd, flags.outputSchema);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      throw new AgentRxError('invalid_options', `--output-schema: cannot read ${flags.outputSchema} (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
    }
    let schema: unknown;
    try {
      schema = JSON.parse(text);
    } catch (e) {
      throw new AgentRxError('invalid_options', `--output-schema: ${flags.outputSchema} is not JSON (${(e as Error).message})`);
    }
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
      throw new AgentRxError('invalid_options', `--output-schema: ${flags.outputSchema} must hold a JSON Schema object`);
    out.outputSchema = schema as Record<string, unknown>;
  }
  return out;
}

/** Remembers the session id of the run (also when it fails), for `--record` and the resume hint. */
class SessionIdProbe implements EventConsumer {
  readonly id = 'cli-session-id';
  sessionId: string | undefined;
  onEvent(_ev: unknown, ctx: ConsumerContext): void {
    this.sessionId ??= ctx.sessionId;
  }
}
