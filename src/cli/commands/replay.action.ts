import { readCassette } from '../../core/store/cassette.js';
import type { CliIo } from '../cli-io.js';
import { pathFrom } from '../flags.js';
import { guarded } from '../report.js';
import { renderFormat, type RenderFlags, type RenderFormat } from '../render-flags.js';
import { renderLog } from '../render-log.js';
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

/** `agentrx replay <file>`: the exit code of rendering the cassette. */
export function replayCommand(file: string, flags: RenderFlags & { pace?: boolean }, io: CliIo): Promise<number> {
  return guarded(io, () => replayFile(file, renderFormat(flags), flags.pace === true, io));
}
