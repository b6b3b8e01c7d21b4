import { AgentRx } from '../../agentrx.js';
import { demoToolsModule } from '../../plugins/tools/tools.module.js';
import type { CliIo, RegisterCommand } from '../cli-io.js';
import { onDemoModel, startDemoModel } from '../demo-model.js';
import { EXIT_FAILED, EXIT_OK } from '../exit-codes.js';
import { report } from '../report.js';
import { consumersFor } from '../run-config.js';

/** The prompt `agentrx demo` (and `npm start`) runs when none is given. */
export const DEMO_PROMPT = 'What time is it, what is (17 + 25) * 3, and what does README.md say?';

/** `agentrx demo [prompt]`: one session on the embedded demo model, with the demo tools. */
export const registerDemoCommand: RegisterCommand = (program, ctx) => {
  program
    .command('demo')
    .description('run a demo session on an embedded, rule-based model: no keys, no network')
    .argument('[prompt]', 'what to ask the demo model', DEMO_PROMPT)
    .option('--json', 'print AG-UI events as JSON lines instead of text')
    .action(async (prompt: string, flags: { json?: boolean }) => {
      ctx.exit(await demoCommand(prompt, flags, ctx.io));
    });
};

/** Runs `prompt` on the demo model (started here, closed after); exit code 1 for a terminated run. */
async function demoCommand(prompt: string, flags: { json?: boolean }, io: CliIo): Promise<number> {
  const emulator = await startDemoModel();
  let rx: AgentRx | undefined;
  try {
    if (!flags.json) io.err.write(`agentrx demo: a rule-based demo model on ${emulator.baseUrl} (no keys, no network)\n`);
    rx = await AgentRx.create({
      config: onDemoModel({}, emulator.baseUrl),
      env: io.env,
      modules: [demoToolsModule],
      consumers: consumersFor(flags.json === true, {}, io),
      handleSignals: true,
    });
    const result = await rx.run({ prompt });
    return result.terminal === 'terminated' ? EXIT_FAILED : EXIT_OK;
  } catch (e) {
    return report(e, io, emulator.baseUrl);
  } finally {
    await rx?.stop();
    await emulator.close();
  }
}
