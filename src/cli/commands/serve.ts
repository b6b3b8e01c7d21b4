import { Option } from 'commander';
import type { RegisterCommand } from '../cli-io.js';
import { collect, DEMO_TOOLS_HELP, MODULE_HELP, STORE_HELP } from '../flags.js';

/** Flags of `agentrx serve`. */
export interface ServeFlags {
  port?: string;
  host?: string;
  token?: string;
  cors?: string[];
  demo?: boolean;
  confirm?: 'allow' | 'deny';
  config?: string;
  store?: string;
  record?: string;
  module?: string[];
  demoTools?: boolean;
}

/** `agentrx serve`: the AG-UI endpoint and its chat page, until stopped. */
export const registerServeCommand: RegisterCommand = (program, ctx) => {
  program
    .command('serve')
    .description('serve the AG-UI endpoint (POST /agent, SSE or protobuf) and a chat page (GET /) until SIGINT/SIGTERM')
    .option('--port <n>', 'TCP port; 0 picks a free one (default 8787, or agui.port of the config)')
    .option('--host <host>', 'interface to listen on (default 127.0.0.1, or agui.host of the config)')
    .option('--token <token>', 'require Authorization: Bearer <token> on POST /agent (default: $AGENTRX_TOKEN, or agui.token of the config)')
    .option('--cors <origins...>', 'origins allowed to call the endpoint from another site, e.g. https://app.example')
    .option('--demo', 'answer with the embedded rule-based demo model and demo tools: no keys, no network')
    .option('-c, --config <file>', 'JSON config file (provider, agent, limits, and an "agui" section for the endpoint)')
    .addOption(
      new Option('--confirm <decision>', "answer the host's requests to confirm a tool of its own (Claude Managed Agents always_ask) for every run").choices([
        'allow',
        'deny',
      ]),
    )
    .option('--store <dir>', STORE_HELP)
    .option('--record <dir>', 'write each session to <dir>/<session id>.json (a cassette) when it closes (see agentrx replay)')
    .option('--module <file>', MODULE_HELP, collect, [])
    .option('--demo-tools', `${DEMO_TOOLS_HELP}, plus add_todo (changes the shared state) and send_email (asks for approval, only pretends) (on with --demo)`)
    .action(async (flags: ServeFlags) => {
      ctx.exit(await (await import('./serve.action.js')).serveCommand(flags, ctx.io));
    });
};
