import { Option } from 'commander';
import { BUILTIN_PROVIDER_IDS } from '../../plugins/providers/provider-ids.js';
import type { RegisterCommand } from '../cli-io.js';
import { collect, DEMO_TOOLS_HELP, MODULE_HELP, STORE_HELP } from '../flags.js';
import { type ConfigFlags } from '../run-config.js';

/** Flags of `agentrx run`. */
export interface RunFlags extends ConfigFlags {
  config?: string;
  json?: boolean;
  timeout?: string;
  maxTurns?: string;
  confirm?: 'allow' | 'deny';
  store?: string;
  resume?: string;
  record?: string;
  /** `--mcp <name>=<command …>`, repeatable: MCP servers for this run. */
  mcp?: string[];
  /** `--module <file>`, repeatable: ES modules exporting tools, modules, consumers. */
  module?: string[];
  /** `--demo-tools`: also offer the demo tools (get_time, calculate, read_file on the working folder). */
  demoTools?: boolean;
  /** `--instructions <text>`: this run's system prompt. */
  instructions?: string;
  /** `--temperature <n>`: this run's sampling temperature. */
  temperature?: string;
  /** `--output-schema <file>`: a JSON Schema file the final answer must match. */
  outputSchema?: string;
}

/** `agentrx run <prompt>`: one prompt to its end, printed as it runs. */
export const registerRunCommand: RegisterCommand = (program, ctx) => {
  program
    .command('run')
    .description('run one prompt to its end and print the answer')
    .argument('<prompt>', 'what to ask the agent')
    .option('-c, --config <file>', 'JSON config file (${VAR} interpolation applies)')
    .option('-p, --provider <id>', `provider id: ${BUILTIN_PROVIDER_IDS.join(', ')}, or one that a --module registers`)
    .option('-m, --model <model>', 'model id sent to the host')
    .option('-u, --base-url <url>', "the provider's base URL (e.g. http://127.0.0.1:11434/v1 for Ollama)")
    .option('--api <api>', "the local provider's model API: openai-chat (default), anthropic-messages, openai-responses or gemini")
    .option('--timeout <ms>', 'run timeout in milliseconds')
    .option('--max-turns <n>', 'turn limit')
    .addOption(
      new Option('--confirm <decision>', "answer the host's requests to confirm a tool of its own (Claude Managed Agents always_ask)").choices([
        'allow',
        'deny',
      ]),
    )
    .option('--json', 'print AG-UI events as JSON lines instead of text')
    .option('--resume <id>', 'continue the recorded session <id> with this prompt (agentrx sessions ls lists them)')
    .option('--record <file>', 'write the session to a cassette file when the run ends (see agentrx replay)')
    .option('--store <dir>', STORE_HELP)
    .option(
      '--mcp <server>',
      "an MCP server for this run, '<name>=<command …>' (repeatable), e.g. --mcp 'files=npx -y @modelcontextprotocol/server-filesystem .'",
      collect,
      [],
    )
    .option('--module <file>', MODULE_HELP, collect, [])
    .option('--demo-tools', DEMO_TOOLS_HELP)
    .option('--instructions <text>', "this run's system prompt instead of the agent's (local, bedrock-agentcore)")
    .option('--temperature <n>', "this run's sampling temperature, 0 to 2 (local, bedrock-agentcore)")
    .option(
      '--output-schema <file>',
      'a JSON Schema file (of an object) the final answer must match; the answer is validated, sent back once if it does not match',
    )
    .action(async (prompt: string, flags: RunFlags) => {
      ctx.exit(await (await import('./run.action.js')).runCommand(prompt, flags, ctx.io));
    });
};
