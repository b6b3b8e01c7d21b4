import { AgentRx } from '../../agentrx.js';
import type { ConfirmTool } from '../../core/plugin/session-options.js';
import { demoAgUiToolsModule } from '../../plugins/tools/tools.module.js';
import type { CliIo } from '../cli-io.js';
import { onDemoModel, startDemoModel } from '../demo-model.js';
import { EXIT_FAILED, EXIT_OK } from '../exit-codes.js';
import { report } from '../report.js';
import { consumersFor, demoTools } from '../run-config.js';
import type { DemoFlags } from './demo.js';
/**
 * Runs `prompt` on the demo model (started here, closed after); exit code 1 for a terminated run.
 * The session starts with an empty shared state, so `add_todo` has somewhere to write (`--json`
 * shows its STATE_DELTA).
 */
export async function demoCommand(prompt: string, flags: DemoFlags, io: CliIo): Promise<number> {
  const emulator = await startDemoModel();
  let rx: AgentRx | undefined;
  try {
    if (!flags.json) io.err.write(`agentrx demo: a rule-based demo model on ${emulator.baseUrl} (no keys, no network)\n`);
    rx = await AgentRx.create({
      config: onDemoModel({}, emulator.baseUrl),
      env: io.env,
      modules: [...demoTools(true, io.cwd), demoAgUiToolsModule],
      consumers: consumersFor(flags.json === true, {}, io),
      handleSignals: true,
    });
    const result = await rx.run({ prompt, state: {}, confirmTool: demoConfirmation(flags.confirm, io) });
    return result.terminal === 'terminated' ? EXIT_FAILED : EXIT_OK;
  } catch (e) {
    return report(e, io, emulator.baseUrl);
  } finally {
    await rx?.stop();
    await emulator.close();
  }
}

/**
 * The demo's answer to a tool that needs approval: `--confirm`'s decision, deny without it (a
 * one-shot run has nobody to ask). Each decision is noted on stderr, with how to change it.
 */
function demoConfirmation(decision: 'allow' | 'deny' | undefined, io: CliIo): ConfirmTool {
  return (toolUse) => {
    const allow = decision === 'allow';
    io.err.write(
      `agentrx demo: ${toolUse.name} needs approval; ${allow ? 'allowed (--confirm allow)' : `denied (${decision === 'deny' ? '--confirm deny' : 'pass --confirm allow to let it run'})`}\n`,
    );
    return allow
      ? { allow }
      : { allow, denyMessage: decision === 'deny' ? 'denied with --confirm deny' : 'agentrx demo denies it unless run with --confirm allow' };
  };
}
