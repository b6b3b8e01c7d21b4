import type { CliIo, RegisterCommand } from '../cli-io.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from '../exit-codes.js';
import { integerFlag } from '../flags.js';
import { untilStopped } from '../until-stopped.js';

/** The hosts `agentrx emulate` serves. */
const HOSTS = ['claude-managed-agents', 'bedrock-agentcore'] as const;
type EmulatedHost = (typeof HOSTS)[number];

/** Flags of `agentrx emulate`. */
export interface EmulateFlags {
  readonly port?: string;
  readonly apiKey?: string;
}

/** Credentials the AgentCore emulator checks signatures with (not secrets: they only open the emulator). */
const EMULATOR_AWS = { accessKeyId: 'AKIDAGENTRXEMULATOR', secretAccessKey: 'agentrx-emulator-secret' } as const;

/** `agentrx emulate`: a host's emulator on 127.0.0.1, for trying the provisioning and artifacts commands without an account. */
export const registerEmulateCommand: RegisterCommand = (program, ctx) => {
  program
    .command('emulate')
    .description('serve a host emulator on 127.0.0.1 (no account, no network) and print a config for it; runs until Ctrl-C')
    .argument('<host>', `the host to emulate: ${HOSTS.join(' or ')}`)
    .option('--port <n>', 'port on 127.0.0.1 (default: a free one)')
    .option('--api-key <key>', 'claude-managed-agents: the key the emulator asks for (default: sk-ant-emulator)')
    .action(async (host: string, flags: EmulateFlags) => {
      ctx.exit(await runEmulateCommand(host, flags, ctx.io));
    });
};

/**
 * Starts the emulator of `host`, prints a config file's content that points the provider at it
 * (stdout, one JSON object: save it as `agentrx.json`), and serves until SIGINT/SIGTERM (or
 * `io.signal`). Exit 2 for an unknown host or a bad port, 1 when the port is taken.
 */
export async function runEmulateCommand(host: string, flags: EmulateFlags, io: CliIo): Promise<number> {
  const fail = (code: number, line: string): number => {
    io.err.write(`agentrx emulate: ${line}\n`);
    return code;
  };
  if (!(HOSTS as readonly string[]).includes(host)) return fail(EXIT_USAGE, `unknown host '${host}'; emulated hosts: ${HOSTS.join(', ')}`);
  let port: number | undefined;
  try {
    port = integerFlag('--port', flags.port, 0, 65_535);
  } catch (e) {
    return fail(EXIT_USAGE, (e as Error).message);
  }
  let served: { baseUrl: string; close(): Promise<void> };
  try {
    served = await start(host as EmulatedHost, port, flags.apiKey ?? 'sk-ant-emulator');
  } catch (e) {
    return fail(EXIT_FAILED, `cannot listen on 127.0.0.1:${port ?? 0} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); pick another --port`);
  }
  io.out.write(`${JSON.stringify(configFor(host as EmulatedHost, served.baseUrl, flags.apiKey ?? 'sk-ant-emulator'))}\n`);
  io.err.write(`agentrx emulate: ${host} on ${served.baseUrl} (Ctrl-C stops it); the line above is a config for it\n`);
  await untilStopped(io.signal);
  await served.close();
  return EXIT_OK;
}

async function start(host: EmulatedHost, port: number | undefined, apiKey: string): Promise<{ baseUrl: string; close(): Promise<void> }> {
  if (host === 'claude-managed-agents') {
    const { startCmaEmulator } = await import('../../testing/cma-emulator.js');
    return startCmaEmulator({ apiKey, ...(port !== undefined ? { port } : {}) });
  }
  const { startAgentCoreEmulator } = await import('../../testing/agentcore-emulator.js');
  return startAgentCoreEmulator({ credentials: EMULATOR_AWS, ...(port !== undefined ? { port } : {}) });
}

/** A config selecting `host` on the emulator at `baseUrl`. */
function configFor(host: EmulatedHost, baseUrl: string, apiKey: string): Record<string, unknown> {
  const section =
    host === 'claude-managed-agents'
      ? { apiKey, baseUrl }
      : { endpoint: baseUrl, region: 'us-east-1', ...EMULATOR_AWS, executionRoleArn: 'arn:aws:iam::123456789012:role/agentrx-emulated' };
  return { provider: host, providers: { [host]: section } };
}
