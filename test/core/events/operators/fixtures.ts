import { verifyEvents } from '@ag-ui/client';
import { from, lastValueFrom, toArray } from 'rxjs';
import { toWireEvent } from '../../../../src/servers/agui-http/agui-http.stream.js';
import type { AgUiEvent } from '../../../../src/core/events/agui-event.js';
import { toAgUi } from '../../../../src/core/events/operators/to-ag-ui.js';
import type { RawEvent, ToolUse, TurnTerminal, Usage } from '../../../../src/core/model.js';
import type { AgentRxEvent, EventDraft, SessionEvent } from '../../../../src/core/events/session-event.js';

/** Envelopes (`SessionEvent`) for operator tests. `at` doubles as `seq` so ordering stays visible. */
export class EnvelopeFixtures {
  static readonly threadId = 'thread-1';
  static readonly usage: Usage = { inputTokens: 10, outputTokens: 5 };

  static provider(raw: RawEvent, at: number, turn = 1): SessionEvent {
    return { seq: at, sessionId: 'sess-1', turn, provider: 'fake', source: 'provider', raw, at };
  }

  static agentrx(raw: AgentRxEvent, at: number, turn = 1): SessionEvent {
    return { seq: at, sessionId: 'sess-1', turn, provider: 'fake', source: 'agentrx', raw, at };
  }

  /** An agentrx envelope whose event is outside the typed union (hand-built or corrupted): operators must drop it. */
  static hostile(raw: Record<string, unknown>, at: number): SessionEvent {
    return { seq: at, sessionId: 'sess-1', turn: 1, provider: 'fake', source: 'agentrx', raw, at } as unknown as SessionEvent;
  }

  static runStarted(at: number, runId = 'run-1'): SessionEvent {
    return EnvelopeFixtures.agentrx({ type: 'agentrx.run_started', runId, threadId: EnvelopeFixtures.threadId, resumed: false }, at);
  }

  static textDelta(at: number, text: string, messageId = 'msg-1'): SessionEvent {
    return EnvelopeFixtures.agentrx({ type: 'agentrx.text_delta', text, messageId }, at);
  }

  static reasoningDelta(at: number, text: string, messageId = 'msg-1.reasoning'): SessionEvent {
    return EnvelopeFixtures.agentrx({ type: 'agentrx.reasoning_delta', text, messageId }, at);
  }

  static toolCallDelta(at: number, toolUseId: string, argsDelta: string, more: { name?: string; parentMessageId?: string } = {}): SessionEvent {
    return EnvelopeFixtures.agentrx({ type: 'agentrx.tool_call_delta', toolUseId, ...more, argsDelta }, at);
  }

  static turnEnd(
    at: number,
    over: { turn?: number; terminal?: TurnTerminal; stopReason?: unknown; customToolUses?: readonly ToolUse[]; serverToolUses?: readonly ToolUse[] } = {},
  ): SessionEvent {
    return EnvelopeFixtures.agentrx(
      {
        type: 'agentrx.turn_end',
        turn: over.turn ?? 1,
        terminal: over.terminal ?? 'end_turn',
        stopReason: 'stopReason' in over ? over.stopReason : 'end_turn',
        usage: EnvelopeFixtures.usage,
        customToolUses: over.customToolUses ?? [],
        serverToolUses: over.serverToolUses ?? [],
      },
      at,
    );
  }

  static toolStarted(at: number, toolUse: ToolUse): SessionEvent {
    return EnvelopeFixtures.agentrx({ type: 'agentrx.tool_started', toolUse }, at);
  }

  static toolResult(at: number, toolUse: ToolUse, content: string): SessionEvent {
    return EnvelopeFixtures.agentrx(
      { type: 'agentrx.tool_result', toolUse, result: { toolUseId: toolUse.id, content, isError: false }, replayed: false, durationMs: 3 },
      at,
    );
  }

  static hostToolResult(at: number, id: string, content: string, isError = false): SessionEvent {
    return EnvelopeFixtures.agentrx({ type: 'agentrx.host_tool_result', toolUse: { id }, result: { content, isError } }, at);
  }

  static runFinished(at: number, runId = 'run-1', over: { stopReason?: unknown } = {}): SessionEvent {
    return EnvelopeFixtures.agentrx(
      {
        type: 'agentrx.run_finished',
        runId,
        threadId: EnvelopeFixtures.threadId,
        terminal: 'end_turn',
        stopReason: 'stopReason' in over ? over.stopReason : 'end_turn',
        turns: 1,
        usage: EnvelopeFixtures.usage,
      },
      at,
    );
  }

  static runError(at: number, runId = 'run-1', message = 'host failed', code = 'provider_error'): SessionEvent {
    return EnvelopeFixtures.agentrx({ type: 'agentrx.run_error', runId, threadId: EnvelopeFixtures.threadId, code, message }, at);
  }

  static diagnostic(at: number, message: string): SessionEvent {
    return EnvelopeFixtures.agentrx({ type: 'agentrx.diagnostic', message }, at);
  }
}

/** Drafts (`EventDraft`) for operator tests. */
export class DraftFixtures {
  static provider(raw: RawEvent, turn = 1, id?: string): EventDraft {
    return id === undefined ? { source: 'provider', raw, turn } : { source: 'provider', id, raw, turn };
  }

  static agentrx(raw: AgentRxEvent, turn = 1): EventDraft {
    return { source: 'agentrx', raw, turn };
  }

  /** An agentrx draft whose event is outside the typed union. */
  static hostile(raw: Record<string, unknown>, turn = 1): EventDraft {
    return { source: 'agentrx', raw, turn } as unknown as EventDraft;
  }

  /** The draft `extractHostToolResults` synthesizes. */
  static hostToolResult(id: string, content: string, isError = false, turn = 1): EventDraft {
    return { source: 'agentrx', turn, raw: { type: 'agentrx.host_tool_result', toolUse: { id }, result: { content, isError } } };
  }

  /** The draft `extractTextDeltas` synthesizes. */
  static textDelta(text: string, messageId: string, turn = 1): EventDraft {
    return { source: 'agentrx', turn, raw: { type: 'agentrx.text_delta', text, messageId } };
  }
}

/** A tool use for fixtures. */
export function toolUse(id: string, name: string, input: Record<string, unknown> = {}): ToolUse {
  return { id, name, input };
}

/** Every event of `envelopes` through `toAgUi()`, as one synchronous, completing stream. */
export function translate(envelopes: readonly SessionEvent[]): AgUiEvent[] {
  const out: AgUiEvent[] = [];
  from(envelopes)
    .pipe(toAgUi())
    .subscribe((e) => out.push(e));
  return out;
}

/** Runs every event through `@ag-ui/client`'s verifier; resolves with the events that passed. */
export function verified(events: readonly AgUiEvent[]): Promise<unknown[]> {
  return lastValueFrom(from(events.map(toWireEvent)).pipe(verifyEvents(false), toArray()));
}
