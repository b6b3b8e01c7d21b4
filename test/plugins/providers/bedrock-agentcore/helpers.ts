import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import type { Observable } from 'rxjs';
import { MemoryLogger } from '../../../../src/core/logger.js';
import type { AgentSpec, RawEvent } from '../../../../src/core/model.js';
import { AgentCoreProviderOptionsClass } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore.config.js';
import { AgentCoreAgentProvider, type AgentCoreConn } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore.provider.js';
import type { AgentCoreEmulator } from '../../../../src/testing/agentcore-emulator.js';

/** Static test credentials; the secret must never show up anywhere but the signature. */
export const CREDS = { accessKeyId: 'AKIDAGENTRXTEST01', secretAccessKey: 'agentcore-secret-DO-NOT-LEAK-42' } as const;
export const REGION = 'eu-west-1';
export const HARNESS_ARN = 'arn:aws:bedrock-agentcore:eu-west-1:123456789012:harness/test-harness';

/** Validated options, failing the test on any validation error. */
export function options(plain: Record<string, unknown>): AgentCoreProviderOptionsClass {
  const o = plainToInstance(AgentCoreProviderOptionsClass, plain, { exposeDefaultValues: true });
  const errors = validateSync(o, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) throw new Error(`invalid test options: ${errors.map((e) => e.toString()).join('; ')}`);
  return o;
}

/** The raw config section pointing both planes at the emulator with static credentials. */
export function emulatorSection(emulator: AgentCoreEmulator, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    endpoint: emulator.baseUrl,
    region: REGION,
    accessKeyId: CREDS.accessKeyId,
    secretAccessKey: CREDS.secretAccessKey,
    harnessArn: HARNESS_ARN,
    retryBaseMs: 1,
    ...extra,
  };
}

/** Validated options of {@link emulatorSection}. */
export function emulatorOptions(emulator: AgentCoreEmulator, extra: Record<string, unknown> = {}): AgentCoreProviderOptionsClass {
  return options(emulatorSection(emulator, extra));
}

/** A provider over the emulator and the logger it writes to. */
export function makeProvider(emulator: AgentCoreEmulator, extra: Record<string, unknown> = {}): { provider: AgentCoreAgentProvider; logger: MemoryLogger } {
  const logger = new MemoryLogger();
  return { provider: new AgentCoreAgentProvider(emulatorOptions(emulator, extra), logger), logger };
}

export const SPEC: AgentSpec = {
  name: 'helper',
  systemPrompt: 'Be brief.',
  tools: [
    {
      name: 'echo',
      description: 'Echoes text back in upper case.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
    { name: 'add', description: 'Adds two integers.', inputSchema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } } } },
  ],
};

/** Opens a conn for `provider` (fresh unless `sessionId`). */
export function open(provider: AgentCoreAgentProvider, opts: { sessionId?: string; signal?: AbortSignal } = {}): Promise<AgentCoreConn> {
  return provider.open({
    spec: SPEC,
    signal: opts.signal ?? new AbortController().signal,
    ...(opts.sessionId !== undefined ? { sessionId: opts.sessionId } : {}),
  });
}

/** Everything an Observable emitted, and how it ended. */
export interface Collected {
  readonly events: RawEvent[];
  readonly error: unknown;
  readonly completed: boolean;
}

/** Subscribes and resolves when the Observable completes or errors. */
export function collect(obs: Observable<RawEvent>): Promise<Collected> {
  return new Promise((resolve) => {
    const events: RawEvent[] = [];
    obs.subscribe({
      next: (e) => events.push(e),
      error: (error: unknown) => resolve({ events, error, completed: false }),
      complete: () => resolve({ events, error: undefined, completed: true }),
    });
  });
}

/** The first key of each event (the Converse event name) or its `type`. */
export function kinds(events: readonly RawEvent[]): string[] {
  return events.map((e) => (typeof e['type'] === 'string' ? e['type'] : (Object.keys(e)[0] ?? '?')));
}
