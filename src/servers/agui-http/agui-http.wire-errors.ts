import type { RunErrorEvent } from '../../core/events/agui-event.js';

/**
 * What a client is told of a session failure, by error code. The session's own message is not
 * the client's to read: it may name the model server (its URL, host and port), quote the
 * upstream's answer or carry a stack. It goes to the endpoint's request log instead.
 */
const TOLD: ReadonlyMap<string, string> = new Map(
  Object.entries({
    timeout: 'the run timed out',
    cancelled: 'the run was cancelled',
    max_turns_exceeded: 'the agent reached its turn limit',
    halted: 'the run was halted',
    unresolved_requires_action: 'the agent waits for an action this endpoint cannot take',
    stream_error: "the agent's event stream broke off",
    harness_stream_error: "the agent host's event stream broke off",
    early_termination: 'the model server ended its answer early',
    outcome_unsupported: 'the agent host does not support the requested outcome',
    invalid_config: 'the agent is not configured for this request',
    invalid_options: 'the agent refused the request',
    unsupported: 'the agent host does not support this request',
    provider_error: 'the model provider failed',
    session_closed: 'the session ended before the run finished',
    store_error: 'the session log could not be read or written',
    incomplete: "the session's events ended before the run finished",
  }),
);

/** An HTTP status a model server answered with, as agentrx's providers word it ("returned HTTP 400"). */
const HTTP_STATUS = /\bHTTP (\d{3})\b/;

/** The full text of each client RUN_ERROR made by {@link clientRunError}, for the endpoint's log. */
const details = new WeakMap<RunErrorEvent, string>();

/**
 * The RUN_ERROR a client gets for a session failure `ev`: the same code (and timestamp), and a
 * message in client terms, e.g. "the model server refused the request (HTTP 400)", never a URL,
 * host, port, stack or the upstream's body. The full message stays with the returned event for
 * the request log ({@link failureDetail}); it is never encoded. Pure.
 */
export function clientRunError(ev: RunErrorEvent): RunErrorEvent {
  const told: RunErrorEvent = {
    type: 'RUN_ERROR',
    message: toldOf(ev.code, ev.message),
    ...(ev.code !== undefined ? { code: ev.code } : {}),
    ...(ev.timestamp !== undefined ? { timestamp: ev.timestamp } : {}),
  };
  details.set(told, details.get(ev) ?? ev.message);
  return told;
}

/** The full text behind a RUN_ERROR {@link clientRunError} made (undefined for any other event). */
export function failureDetail(ev: RunErrorEvent): string | undefined {
  return details.get(ev);
}

function toldOf(code: string | undefined, message: string): string {
  if (code === 'http_error') {
    const status = Number(HTTP_STATUS.exec(message)?.[1] ?? NaN);
    if (status === 401 || status === 403) return `the model server refused the credentials (HTTP ${status})`;
    if (status === 429) return `the model server is rate limiting requests (HTTP ${status}); try again later`;
    if (status >= 400 && status < 500) return `the model server refused the request (HTTP ${status})`;
    if (status >= 500 && status < 600) return `the model server failed (HTTP ${status})`;
    if (status >= 200 && status < 400) return `the model server's answer was not a chat completion (HTTP ${status})`;
    return 'the model server could not be reached';
  }
  return (code !== undefined ? TOLD.get(code) : undefined) ?? 'the run failed';
}
