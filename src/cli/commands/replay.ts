import type { RegisterCommand } from '../cli-io.js';
import { MAX_PACE_GAP_MS, type RenderFlags } from '../render-flags.js';

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
      ctx.exit(await (await import('./replay.action.js')).replayCommand(file, flags, ctx.io));
    });
};
