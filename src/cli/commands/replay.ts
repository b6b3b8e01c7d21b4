import { readCassette } from '../../core/store/cassette.js';
import type { CliIo, RegisterCommand } from '../cli-io.js';
import { pathFrom } from '../flags.js';
import { guarded } from '../report.js';
import { MAX_PACE_GAP_MS, renderFormat, renderLog, type RenderFlags, type RenderFormat } from '../render-log.js';

/** `agentrx replay <file>`: a cassette rendered offline through the normal consumers. */
export const registerReplayCommand: RegisterCommand = (program, ctx) => {
  program
    .command('replay')
    .description('render a recorded session (a cassette) through the normal consumers, offline')
    .argument('<file>', 'cassette file (agentrx sessions export, or run --record)')
    .option('--json', 'print the envelopes of the log as JSON lines')
    .option('--agui', 'print the AG-UI events as JSON lines')
    .option('--pace', `wait the recorded time between events (at most ${MAX_PACE_GAP_MS / 1000}s per gap)`)
    .action(async (file: string, flags: RenderFlags & { pace?: boolean }) => {
      ctx.exit(await guarded(ctx.io, () => replayFile(file, renderFormat(flags), flags.pace === true, ctx.io)));
    });
};

/** Renders a cassette file, fast or at recorded pace. */
async function replayFile(file: string, format: RenderFormat, pace: boolean, io: CliIo): Promise<void> {
  const cassette = await readCassette(pathFrom(io.cwd, file));
  const { record } = cassette;
  if (format === 'terminal')
    io.err.write(
      `agentrx replay: session ${record.sessionId} · ${record.provider} · ${record.status} · ${cassette.envelopes.length} events${pace ? ' · at recorded pace' : ''}\n`,
    );
  await renderLog(cassette.envelopes, format, io, { pace, sessionId: record.sessionId, threadId: record.threadId });
}
