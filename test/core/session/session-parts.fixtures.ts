import type { AgentRxEvent, SessionEvent } from '../../../src/core/events/session-event.js';
import type { RawEvent, TurnResult } from '../../../src/core/model.js';
import type { AgentProvider, StreamingProvider, TurnProvider } from '../../../src/core/plugin/agent-provider.js';
import type { HostLinkEvents } from '../../../src/core/session/host-link.js';
import { Ingestion } from '../../../src/core/session/ingestion.js';
import { defaultEventId } from '../../../src/core/plugin/agent-provider.js';
import { NO_HOST_EVENTS, type HostEvent } from '../../../src/core/plugin/host-event.js';
import { ScriptedProvider, type ScriptedProviderOptions } from '../../../src/testing/scripted-provider.js';

/** A ScriptedProvider narrowed to the request/response member of the contract. */
export function turnProvider(opts: Omit<ScriptedProviderOptions, 'mode'>): { scripted: ScriptedProvider; provider: TurnProvider } {
  const scripted = new ScriptedProvider({ ...opts, mode: 'request_response' });
  const provider: AgentProvider = scripted;
  if (provider.mode !== 'request_response') throw new Error('expected a request/response provider');
  return { scripted, provider };
}

/** A ScriptedProvider narrowed to the streaming member of the contract. */
export function streamingProvider(opts: Omit<ScriptedProviderOptions, 'mode'>): { scripted: ScriptedProvider; provider: StreamingProvider } {
  const scripted = new ScriptedProvider({ ...opts, mode: 'streaming' });
  const provider: AgentProvider = scripted;
  if (provider.mode !== 'streaming') throw new Error('expected a streaming provider');
  return { scripted, provider };
}

/** An Ingestion with the default id, `text` events as deltas and `idle` events as turn ends; records every envelope. */
export function recordingIngestion(opts: { dedupeWindow?: number; retainEvents?: boolean } = {}): { ingestion: Ingestion; envs: SessionEvent[] } {
  const ingestion = new Ingestion({
    providerId: 'test',
    eventId: defaultEventId,
    decode: (raw: RawEvent): readonly HostEvent[] =>
      raw['type'] === 'text' ? [{ kind: 'text', text: String(raw['text']) }] : raw['type'] === 'idle' ? [{ kind: 'turn_end' }] : NO_HOST_EVENTS,
    dedupeWindow: opts.dedupeWindow ?? 100,
    retainEvents: opts.retainEvents ?? false,
  });
  const envs: SessionEvent[] = [];
  ingestion.events$.subscribe((e) => envs.push(e));
  return { ingestion, envs };
}

/** HostLinkEvents that record what a link reports. */
export class RecordingLinkEvents implements HostLinkEvents {
  readonly turns: (readonly RawEvent[])[] = [];
  readonly recoveries: { pending: string[]; missed: number }[] = [];
  readonly failures: Error[] = [];
  private waiters: (() => void)[] = [];
  turn(events: readonly RawEvent[]): void {
    this.turns.push(events);
    this.wake();
  }
  recovered(rec: { pending: readonly { id: string }[]; missed: readonly RawEvent[] }): void {
    this.recoveries.push({ pending: rec.pending.map((u) => u.id), missed: rec.missed.length });
    this.wake();
  }
  failed(error: Error): void {
    this.failures.push(error);
    this.wake();
  }
  /** Resolves once `done()` holds (checked after every report). */
  until(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (): void => {
        if (done()) resolve();
        else this.waiters.push(check);
      };
      this.waiters.push(check);
    });
  }
  private wake(): void {
    const ws = this.waiters;
    this.waiters = [];
    ws.forEach((w) => w());
  }
}

/** The types of the agentrx events among `envs`. */
export const agentrxTypes = (envs: readonly SessionEvent[]): AgentRxEvent['type'][] => envs.flatMap((e) => (e.source === 'agentrx' ? [e.raw.type] : []));

/**
 * The callbacks every hand-written test provider shares (a conn-less session that always ends its
 * turn); subclasses add their mode's members and override what a test looks at.
 */
export abstract class TestProviderBase {
  abstract readonly id: string;
  async open(): Promise<unknown> {
    return undefined;
  }
  sessionId(): string | undefined {
    return 's-1';
  }
  resumed(): boolean {
    return false;
  }
  kickoffInput(): unknown {
    return 'kickoff';
  }
  userInput(text: string): unknown {
    return text;
  }
  resumeInput(..._args: unknown[]): unknown {
    return 'resume';
  }
  normalize(events: readonly RawEvent[]): TurnResult {
    return {
      terminal: 'end_turn',
      stopReason: 'end_turn',
      text: this.id,
      customToolUses: [],
      serverToolUses: [],
      usage: { inputTokens: 0, outputTokens: 0 },
      events: [...events],
    };
  }
  decode(_conn: unknown, _event: RawEvent): readonly HostEvent[] {
    return NO_HOST_EVENTS;
  }
  eventId(event: RawEvent): string | undefined {
    return defaultEventId(event);
  }
}
