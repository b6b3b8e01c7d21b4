import { AgentRx } from '../../../../src/agentrx.js';
import type { EventConsumer } from '../../../../src/core/plugin/event-consumer.js';
import { cmaProviderModule } from '../../../../src/plugins/providers/claude-managed-agents/cma.module.js';
import type { CmaEmulator } from '../../../../src/testing/cma-emulator.js';
import type { CmaWireEvent } from '../../../../src/testing/cma-emulator/cma-script.js';
import { EchoToolHandler, ThrowingToolHandler } from '../../../fakes/fake-tools.js';

export const API_KEY = 'sk-ant-test-0123456789-secret';

/** An AgentRx wired to the emulator with the CMA module, echo + throwing tools. */
export function createCmaRx(
  emu: CmaEmulator,
  opts: { section?: Record<string, unknown>; limits?: Record<string, unknown>; consumers?: EventConsumer[]; config?: Record<string, unknown> } = {},
): Promise<AgentRx> {
  return AgentRx.create({
    modules: [cmaProviderModule],
    tools: [EchoToolHandler, ThrowingToolHandler],
    consumers: opts.consumers ?? [],
    config: {
      provider: 'claude-managed-agents',
      logLevel: 'silent',
      consumers: { terminal: false },
      limits: { reconnectBaseMs: 1, reconnectAttempts: 4, ...(opts.limits ?? {}) },
      providers: { 'claude-managed-agents': { apiKey: API_KEY, baseUrl: emu.baseUrl, retryBaseMs: 1, ...(opts.section ?? {}) } },
      ...(opts.config ?? {}),
    },
  });
}

/** User events of one type the emulator accepted for a session. */
export function received(emu: CmaEmulator, sessionId: string | undefined, type: string): CmaWireEvent[] {
  const s = sessionId ? emu.sessions.get(sessionId) : undefined;
  return (s?.received ?? []).filter((e) => e['type'] === type);
}

/** Bodies of the POST /events requests (all sessions), in order, with their status. */
export function sends(emu: CmaEmulator): { status: number; events: CmaWireEvent[] }[] {
  return emu.requests
    .filter((r) => r.method === 'POST' && /\/v1\/sessions\/[^/]+\/events$/.test(r.path))
    .map((r) => ({ status: r.status, events: (r.body as { events?: CmaWireEvent[] } | undefined)?.events ?? [] }));
}
