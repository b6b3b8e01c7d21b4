import { CopilotKit, useCoAgent, useCopilotAction, type CatchAllActionRenderProps } from '@copilotkit/react-core';
import { CopilotChat, useAgent, useInterrupt } from '@copilotkit/react-core/v2';
import { useEffect, useMemo, useState, type ReactElement } from 'react';
import { AgentRxAgent } from './agentrx-agent.js';

/**
 * Where the page's agent is, read from its URL:
 * - `?runtime=/api/copilotkit`: a CopilotKit runtime whose `default` agent is an `HttpAgent` to
 *   `agentrx serve` (the runtime's own server hosts it);
 * - `?agent=http://127.0.0.1:8787/agent`: `agentrx serve` itself, straight from the browser
 *   (start it with `--cors <this page's origin>`).
 * `thread` is the chat's thread id; the page adds one to its URL when absent, so a reload goes on
 * with the same thread (and reattaches to its run when one is under way).
 */
export interface Settings {
  readonly runtimeUrl?: string;
  readonly agentUrl?: string;
  readonly threadId: string;
}

/** The settings of `location`, giving the page a thread id (in its URL) when it has none. */
export function readSettings(location: Location, history: History): Settings {
  const params = new URLSearchParams(location.search);
  let threadId = params.get('thread') ?? '';
  if (threadId === '') {
    threadId = `thread-${crypto.randomUUID()}`;
    params.set('thread', threadId);
    history.replaceState(null, '', `${location.pathname}?${params.toString()}`);
  }
  const runtimeUrl = params.get('runtime') ?? undefined;
  const agentUrl = params.get('agent') ?? undefined;
  return { threadId, ...(runtimeUrl ? { runtimeUrl } : {}), ...(agentUrl ? { agentUrl } : {}) };
}

/** One todo of the shared state (the demo tool `add_todo` appends these). */
interface Todo {
  readonly text: string;
  readonly done: boolean;
}

/** The agent state the page shares with the agent. */
interface DemoState {
  readonly todos: readonly Todo[];
}

/** What the frontend tool `ask_user` answers, every time. */
export const ASK_USER_ANSWER = 'yes, go ahead';

/** The whole page: CopilotKit on the runtime or on `agentrx serve` directly, the chat and the side panel. */
export function App({ settings }: { readonly settings: Settings }): ReactElement {
  const agent = useMemo(
    () => (settings.agentUrl !== undefined ? new AgentRxAgent({ url: settings.agentUrl, threadId: settings.threadId }) : undefined),
    [settings.agentUrl, settings.threadId],
  );
  if (settings.runtimeUrl === undefined && agent === undefined) {
    return <p className="setup">Open this page with ?runtime=&lt;CopilotKit runtime URL&gt; or ?agent=&lt;agentrx serve URL&gt;/agent.</p>;
  }
  const connection = agent !== undefined ? { agents__unsafe_dev_only: { default: agent } } : { runtimeUrl: settings.runtimeUrl, useSingleEndpoint: false };
  return (
    <CopilotKit {...connection} threadId={settings.threadId} enableInspector={false} showDevConsole={false}>
      <main className="layout">
        <section className="chat">
          <CopilotChat labels={{ chatInputPlaceholder: 'Ask the agentrx demo agent…' }} />
        </section>
        <SidePanel way={agent !== undefined ? 'direct' : 'runtime'} threadId={settings.threadId} />
      </main>
    </CopilotKit>
  );
}

/** The shared state (with a form that changes it from the page), the state events, the frontend tool's calls. */
function SidePanel({ way, threadId }: { readonly way: string; readonly threadId: string }): ReactElement {
  const { state, setState, running } = useCoAgent<DemoState>({ name: 'default', initialState: { todos: [] } });
  const [draft, setDraft] = useState('');
  const [asked, setAsked] = useState<readonly string[]>([]);
  const { events, errors } = useAgentEvents();
  const todos = state?.todos ?? [];

  // Every tool call the agent makes, shown in the chat (server tools: get_time, add_todo, send_email, …).
  useCopilotAction({
    name: '*',
    render: (call: CatchAllActionRenderProps) => <ToolCard name={call.name} args={call.args} status={call.status} result={call.result} />,
  });
  // A frontend tool: the demo model calls it for "ask me" / "check with me"; its handler runs here.
  useCopilotAction({
    name: 'ask_user',
    description: 'Asks the user a yes/no question in the page and returns the answer.',
    parameters: [{ name: 'question', type: 'string', description: 'The yes/no question to ask.', required: true }],
    handler: async ({ question }) => {
      setAsked((previous) => [...previous, question]);
      return ASK_USER_ANSWER;
    },
    render: (call) => <ToolCard name="ask_user" args={call.args} status={call.status} result={call.result} />,
  });
  // A tool the agent must have allowed first (agentrx ends the run with an interrupt; the answer resumes it).
  useInterrupt({
    render: ({ interrupt, resolve }) => (
      <div className="confirm" data-testid="confirm-card">
        <p data-testid="confirm-message">{interrupt?.message ?? 'The agent asks to go on.'}</p>
        <button type="button" data-testid="confirm-allow" onClick={() => void resolve({ allow: true })}>
          Allow
        </button>
        <button type="button" data-testid="confirm-deny" onClick={() => void resolve({ allow: false, denyMessage: 'the user said no' })}>
          Deny
        </button>
      </div>
    ),
  });

  return (
    <aside className="panel">
      <p className="meta">
        <span data-testid="way">{way}</span> · <span data-testid="run-status">{running ? 'running' : 'idle'}</span>
        <br />
        <span data-testid="thread-id">{threadId}</span>
      </p>
      <h2>Shared state</h2>
      <ul data-testid="todos">
        {todos.map((t, i) => (
          <li key={i} data-testid="todo">
            {t.text}
          </li>
        ))}
      </ul>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (draft.trim() === '') return;
          setState({ ...state, todos: [...todos, { text: draft.trim(), done: false }] });
          setDraft('');
        }}
      >
        <input data-testid="todo-input" value={draft} placeholder="a todo, from the page" onChange={(e) => setDraft(e.target.value)} />
        <button type="submit" data-testid="todo-add">
          Add
        </button>
      </form>
      <h2>State events</h2>
      <ol data-testid="state-events">
        {events.map((e, i) => (
          <li key={i} data-testid="state-event" data-type={e.type}>
            <b>{e.type}</b> <code>{e.body}</code>
          </li>
        ))}
      </ol>
      {errors.length > 0 && (
        <>
          <h2>Run errors</h2>
          <ul>
            {errors.map((e, i) => (
              <li key={i} data-testid="run-error" className="error">
                {e}
              </li>
            ))}
          </ul>
        </>
      )}
      <h2>Asked in the page</h2>
      <ul data-testid="asked">
        {asked.map((q, i) => (
          <li key={i} data-testid="asked-question">
            {q} → {ASK_USER_ANSWER}
          </li>
        ))}
      </ul>
    </aside>
  );
}

/** A tool call in the chat: its name, arguments, status and result. */
function ToolCard({
  name,
  args,
  status,
  result,
}: {
  readonly name: string;
  readonly args: unknown;
  readonly status: string;
  readonly result: unknown;
}): ReactElement {
  return (
    <div className="tool" data-testid="tool-call" data-tool={name} data-status={status}>
      <b>{name}</b> <span className="status">{status}</span>
      <code data-testid="tool-args">{JSON.stringify(args)}</code>
      {result !== undefined && <pre data-testid="tool-result">{typeof result === 'string' ? result : JSON.stringify(result)}</pre>}
    </div>
  );
}

/** A STATE_SNAPSHOT or STATE_DELTA the page's agent received, as shown. */
interface StateEvent {
  readonly type: 'STATE_SNAPSHOT' | 'STATE_DELTA';
  readonly body: string;
}

/** The `default` agent's latest state events (snapshots and JSON Patch deltas) and run errors, newest last. */
function useAgentEvents(): { readonly events: readonly StateEvent[]; readonly errors: readonly string[] } {
  const { agent } = useAgent({ agentId: 'default' });
  const [events, setEvents] = useState<readonly StateEvent[]>([]);
  const [errors, setErrors] = useState<readonly string[]>([]);
  useEffect(() => {
    const add = (event: StateEvent): void => setEvents((previous) => [...previous, event].slice(-6));
    const fail = (message: string): void => setErrors((previous) => [...previous, message].slice(-3));
    const subscription = agent.subscribe({
      onStateSnapshotEvent: ({ event }) => add({ type: 'STATE_SNAPSHOT', body: JSON.stringify(event.snapshot) }),
      onStateDeltaEvent: ({ event }) => add({ type: 'STATE_DELTA', body: JSON.stringify(event.delta) }),
      onRunErrorEvent: ({ event }) => fail(`RUN_ERROR${event.code !== undefined ? ` ${event.code}` : ''}: ${event.message}`),
      onRunFailed: ({ error }) => fail(`run failed: ${error.message}`),
    });
    return () => subscription.unsubscribe();
  }, [agent]);
  return { events, errors };
}
