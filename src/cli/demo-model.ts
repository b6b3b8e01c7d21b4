import { startOpenAiEmulator, type OpenAiEmulator } from '../testing/openai-emulator.js';
import { sectionOf } from './run-config.js';

/** Model requests the embedded demo model keeps for inspection: a long-running `serve --demo` must not grow without end. */
const DEMO_RECORD_LIMIT = 50;

/** Starts the embedded, rule-based demo model of `demo` and `serve --demo`: no keys, no network. */
export function startDemoModel(): Promise<OpenAiEmulator> {
  return startOpenAiEmulator({ model: 'demo', recordLimit: DEMO_RECORD_LIMIT });
}

/**
 * `base` pointed at the demo model on `baseUrl`: the Local provider, and a 30 s run timeout unless
 * the config sets its own limits.
 */
export function onDemoModel(base: Record<string, unknown>, baseUrl: string): Record<string, unknown> {
  return {
    ...base,
    provider: 'local',
    providers: { ...sectionOf(base['providers']), local: { baseUrl, model: 'agentrx-demo' } },
    limits: { runTimeoutMs: 30_000, ...sectionOf(base['limits']) },
  };
}
