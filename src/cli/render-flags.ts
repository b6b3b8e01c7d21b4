/** The flags that choose how a recorded session is printed (light: the commands' help and checks need them, not the renderer). */
import { AgentRxError } from '../core/errors.js';

/** How a recorded session is printed: the terminal renderer, AG-UI JSON lines, or the envelopes verbatim. */
export type RenderFormat = 'terminal' | 'agui' | 'envelopes';

/** Flags of `sessions show` and `replay`: how to print a recorded session. */
export interface RenderFlags {
  json?: boolean;
  agui?: boolean;
}

/** Longest pause `--pace` keeps between two events (a session idle for an hour replays in seconds). */
export const MAX_PACE_GAP_MS = 5_000;

/** `--json` (the envelopes), `--agui` (AG-UI JSON lines) or the terminal renderer. */
export function renderFormat(flags: RenderFlags): RenderFormat {
  if (flags.json && flags.agui)
    throw new AgentRxError('invalid_options', '--json and --agui cannot be combined: --json prints the envelopes, --agui the AG-UI events');
  return flags.json ? 'envelopes' : flags.agui ? 'agui' : 'terminal';
}
