import { Option } from 'commander';
import type { RegisterCommand } from '../cli-io.js';

/** The prompt `agentrx demo` (and `npm start`) runs when none is given. */
export const DEMO_PROMPT = 'What time is it, what is (17 + 25) * 3, and what does README.md say?';

/** Flags of `agentrx demo`. */
export interface DemoFlags {
  json?: boolean;
  confirm?: 'allow' | 'deny';
}

/** `agentrx demo [prompt]`: one session on the embedded demo model, with the demo tools. */
export const registerDemoCommand: RegisterCommand = (program, ctx) => {
  program
    .command('demo')
    .description('run a demo session on an embedded, rule-based model: no keys, no network')
    .argument('[prompt]', 'what to ask the demo model', DEMO_PROMPT)
    .option('--json', 'print AG-UI events as JSON lines instead of text')
    .addOption(
      new Option('--confirm <decision>', 'answer the demo tools that need approval (send_email, which only pretends); default deny').choices(['allow', 'deny']),
    )
    .action(async (prompt: string, flags: DemoFlags) => {
      ctx.exit(await (await import('./demo.action.js')).demoCommand(prompt, flags, ctx.io));
    });
};
