import type { RegisterCommand } from '../cli-io.js';
import { STORE_HELP } from '../flags.js';
import { guarded } from '../report.js';
import { renderFormat, type RenderFlags } from '../render-flags.js';

/** `agentrx sessions ls|show|export`: the sessions recorded in the store. */
export const registerSessionsCommand: RegisterCommand = (program, ctx) => {
  const { io } = ctx;
  const sessions = program.command('sessions').description('list, show and export the sessions in the store');
  sessions
    .command('ls')
    .description('list the sessions: id, provider, status, turns, updated (newest first)')
    .option('--json', 'one JSON object per line')
    .option('--store <dir>', STORE_HELP)
    .action(async (flags: { json?: boolean; store?: string }) => {
      ctx.exit(
        await guarded(io, async () => {
          const a = await import('./sessions.action.js');
          await a.listSessions(a.openStore(flags.store, io), flags.json === true, io);
        }),
      );
    });
  sessions
    .command('show')
    .description("render a session's log as it ran")
    .argument('<id>', 'session id (agentrx sessions ls)')
    .option('--json', 'print the envelopes of the log as JSON lines')
    .option('--agui', 'print the AG-UI events as JSON lines')
    .option('--store <dir>', STORE_HELP)
    .action(async (id: string, flags: RenderFlags & { store?: string }) => {
      ctx.exit(
        await guarded(io, async () => {
          const a = await import('./sessions.action.js');
          await a.showSession(a.openStore(flags.store, io), id, renderFormat(flags), io);
        }),
      );
    });
  sessions
    .command('export')
    .description('write a session (record and whole log) as a cassette: JSON { version, record, envelopes }')
    .argument('<id>', 'session id (agentrx sessions ls)')
    .option('-o, --output <file>', 'cassette file to write (default: stdout)')
    .option('--store <dir>', STORE_HELP)
    .action(async (id: string, flags: { output?: string; store?: string }) => {
      ctx.exit(
        await guarded(io, async () => {
          const a = await import('./sessions.action.js');
          await a.exportSession(a.openStore(flags.store, io), id, flags.output, io);
        }),
      );
    });
};
