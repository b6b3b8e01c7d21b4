import type { AgUiEvent } from '../../core/events/agui-event.js';

/** An AG-UI message as the client holds it (only the fields this file reads are typed). */
type Message = Record<string, unknown> & { id: string; role: string };
interface ToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { name: string; arguments: string };
}

/**
 * AG-UI MESSAGES_SNAPSHOT: the conversation as the client will hold it. Only this endpoint sends it
 * (it is not one of the events a session translates to), so it is typed here, not in `AgUiEvent`.
 */
export interface MessagesSnapshotEvent {
  readonly type: 'MESSAGES_SNAPSHOT';
  readonly messages: readonly Readonly<Record<string, unknown>>[];
  readonly timestamp: number;
}

/** What the endpoint writes to a client: a session's AG-UI events, and its own MESSAGES_SNAPSHOT. */
export type ClientFrame = AgUiEvent | MessagesSnapshotEvent;

/**
 * The conversation of one run as its client will hold it at the run's end, for the
 * MESSAGES_SNAPSHOT sent before RUN_FINISHED: the request's messages (verbatim, with the client's
 * ids), then what the run's events add, applied by the rules `@ag-ui/client` applies them with
 * (text by message id; a tool call under the assistant message its `parentMessageId` names, else a
 * new one; a tool result right after the tool messages that follow its call's message). Since the
 * ids and the order are the client's own, the snapshot replaces nothing the client would reorder.
 */
export class RunMessages {
  /** The request's messages as the run started with them (what a reattaching client is sent first). */
  readonly input: readonly Record<string, unknown>[];
  private readonly messages: Message[];

  /** @param input The request's `messages` (validated: objects with an `id` and a `role`). */
  constructor(input: readonly Record<string, unknown>[]) {
    this.messages = input.filter((m) => m['role'] !== 'activity').map((m) => structuredClone(m) as Message);
    this.input = structuredClone(this.messages);
  }

  /** Applies one event the client receives. */
  apply(ev: AgUiEvent): void {
    switch (ev.type) {
      case 'TEXT_MESSAGE_START':
        if (!this.find(ev.messageId)) this.messages.push({ id: ev.messageId, role: 'assistant', content: '' });
        break;
      case 'TEXT_MESSAGE_CONTENT': {
        const m = this.find(ev.messageId);
        if (m) m['content'] = `${typeof m['content'] === 'string' ? m['content'] : ''}${ev.delta}`;
        break;
      }
      case 'TOOL_CALL_START': {
        if (this.callOf(ev.toolCallId)) break;
        const parent = ev.parentMessageId !== undefined ? this.find(ev.parentMessageId) : undefined;
        let owner = parent?.role === 'assistant' ? parent : undefined;
        if (!owner) {
          owner = { id: parent || ev.parentMessageId === undefined ? ev.toolCallId : ev.parentMessageId, role: 'assistant', toolCalls: [] };
          this.messages.push(owner);
        }
        const calls = (owner['toolCalls'] ??= []) as ToolCall[];
        calls.push({ id: ev.toolCallId, type: 'function', function: { name: ev.toolCallName, arguments: '' } });
        break;
      }
      case 'TOOL_CALL_ARGS': {
        const call = this.callOf(ev.toolCallId)?.call;
        if (call) call.function.arguments += ev.delta;
        break;
      }
      case 'TOOL_CALL_RESULT': {
        const result: Message = { id: ev.messageId, role: 'tool', toolCallId: ev.toolCallId, content: ev.content };
        const at = this.messages.findIndex((m) => m.role === 'assistant' && (m['toolCalls'] as ToolCall[] | undefined)?.some((c) => c.id === ev.toolCallId));
        if (at < 0) {
          this.messages.push(result);
          break;
        }
        let i = at + 1;
        while (i < this.messages.length && this.messages[i]!.role === 'tool') i++;
        this.messages.splice(i, 0, result);
        break;
      }
      default:
        break;
    }
  }

  /** MESSAGES_SNAPSHOT of the conversation now. */
  snapshot(timestamp: number): MessagesSnapshotEvent {
    return { type: 'MESSAGES_SNAPSHOT', messages: structuredClone(this.messages), timestamp };
  }

  private find(id: string): Message | undefined {
    return this.messages.find((m) => m.id === id);
  }

  private callOf(toolCallId: string): { message: Message; call: ToolCall } | undefined {
    for (const m of this.messages) {
      const call = (m['toolCalls'] as ToolCall[] | undefined)?.find((c) => c.id === toolCallId);
      if (call) return { message: m, call };
    }
    return undefined;
  }
}
