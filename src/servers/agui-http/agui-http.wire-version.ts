import { EventType, type AGUIEventOf, type BaseEvent } from '@ag-ui/core';
import type { AgUiEvent, AgUiEventType, RunFinishedEvent } from '../../core/events/agui-event.js';
import type { ClientFrame, MessagesSnapshotEvent } from './agui-http.messages.js';

/**
 * The AG-UI protocol line a client speaks, as far as the shape of the events it accepts goes:
 * - `0.0`: `@ag-ui/client` 0.0.x (CopilotKit 1.7x pins 0.0.59), whose strict schemas refuse what
 *   1.0 added (a RUN_FINISHED `outcome` with `pendingToolCallIds`, the `cancelled` outcome);
 * - `1.0`: a client that announces protocol 1.0 or later in `RunAgentInput.protocolVersion`.
 */
export type AgUiWireVersion = '0.0' | '1.0';

/** What a client that announces nothing gets: the 0.0.x shape, which every client accepts. */
export const LEGACY_WIRE_VERSION: AgUiWireVersion = '0.0';

/** A version as clients announce it: `1.0`, `1.0.0`, `v1.2` (the major number is all that matters here). */
const ANNOUNCED = /^\s*v?(\d{1,6})(\.\d{1,6}){0,3}\s*$/i;

/**
 * The wire version of a client that announced `announced` (`RunAgentInput.protocolVersion`, or a
 * reconnect's `?protocolVersion=`): `1.0` for any version 1.0 or later, else (nothing announced, a
 * 0.x version, a value that is not a version) the {@link LEGACY_WIRE_VERSION} shape.
 */
export function wireVersionOf(announced: string | undefined): AgUiWireVersion {
  const m = announced === undefined ? null : ANNOUNCED.exec(announced);
  return m !== null && Number(m[1]) >= 1 ? '1.0' : LEGACY_WIRE_VERSION;
}

/**
 * The one place an event is turned into what the client's version accepts, right before it is
 * encoded: the `@ag-ui/core` event (see {@link toWireEvent}); for `0.0`, nothing outside the
 * 0.0.59 schemas: RUN_FINISHED keeps only the outcome fields 0.0.59 knows (`success` without
 * `pendingToolCallIds`, as 0.0.x clients tell their frontend tool calls from their TOOL_CALL
 * events; `interrupt` as it is; any other outcome is left out). A `1.0` client gets every event
 * as it is (RUN_STARTED leaves out the optional `protocolVersion`: a 1.0 client reads its absence
 * as its own version).
 */
export function clientWireEvent(ev: ClientFrame, version: AgUiWireVersion): BaseEvent {
  if (ev.type === 'MESSAGES_SNAPSHOT') return snapshotOnWire(ev);
  return toWireEvent(version === '0.0' && ev.type === 'RUN_FINISHED' ? legacyRunFinished(ev) : ev);
}

/** RUN_FINISHED as `@ag-ui/core` 0.0.59 accepts it (its outcome objects are strict). */
function legacyRunFinished(ev: RunFinishedEvent): RunFinishedEvent {
  const { outcome, ...rest } = ev;
  switch (outcome?.type) {
    case undefined:
      return ev;
    case 'success':
      return { ...rest, outcome: { type: 'success' } };
    case 'interrupt':
      return { ...rest, outcome: { type: 'interrupt', interrupts: outcome.interrupts } };
    default:
      return rest;
  }
}

/**
 * An agentrx AG-UI event as `@ag-ui/core` types it: the same fields, `type` as the `EventType`
 * enum member of the same name (the same string at run time).
 */
export function toWireEvent(ev: AgUiEvent): WireEvent {
  return { ...ev, type: EventType[ev.type] };
}

/** The endpoint's MESSAGES_SNAPSHOT as `@ag-ui/core` types an event (its messages are the client's own, verbatim). */
function snapshotOnWire(ev: MessagesSnapshotEvent): BaseEvent {
  const event: BaseEvent & Pick<MessagesSnapshotEvent, 'messages'> = { type: EventType.MESSAGES_SNAPSHOT, messages: ev.messages, timestamp: ev.timestamp };
  return event;
}

/** `E` with `type` as its `EventType` member. */
type OnWire<E extends AgUiEvent> = Omit<E, 'type'> & { readonly type: (typeof EventType)[E['type']] };
/** The event types whose agentrx shape is not the `@ag-ui/core` event of that type. */
type Mismatched<K extends AgUiEventType> = K extends AgUiEventType
  ? OnWire<Extract<AgUiEvent, { type: K }>> extends AGUIEventOf<(typeof EventType)[K]>
    ? never
    : K
  : never;
/**
 * `BaseEvent` (what the encoder takes) as long as every agentrx AG-UI event, `type` aside, is the
 * `@ag-ui/core` event of its type; otherwise a type that names the mismatched event types, so a
 * drift fails to compile in {@link toWireEvent}.
 */
type WireEvent = [Mismatched<AgUiEventType>] extends [never] ? BaseEvent : { readonly notAnAgUiCoreEvent: Mismatched<AgUiEventType> };
