import { HttpAgent, runHttpRequest, transformHttpEventStream, type HttpAgentConfig, type RunAgentInput } from '@copilotkit/react-core/v2';

/** The session storage key that marks a thread this browser has run on `agentrx serve` (so a reload has a run to reattach to). */
const STARTED_KEY = 'agentrx-example:started-thread:';

/**
 * An AG-UI `HttpAgent` for `agentrx serve`'s `POST /agent` that can also reattach to a thread:
 * `connect` (what CopilotKit calls when a chat mounts on a known thread, e.g. after a reload)
 * reads `GET /threads/:threadId/events` next to the endpoint, which replays the thread's latest
 * run from its start and then follows it live until it ends. The server keeps a run whose client
 * went away for `agui.reconnectGraceMs`; a thread this browser never ran has nothing to attach
 * to, so its connect is an empty stream (no request, no 400 `unknown_thread` in the console).
 */
export class AgentRxAgent extends HttpAgent {
  constructor(config: HttpAgentConfig) {
    super(config);
    // Mark the thread once a run of it starts, so that the page, reloaded, knows to reattach.
    this.subscribe({
      onRunStartedEvent: ({ input }) => {
        globalThis.sessionStorage?.setItem(STARTED_KEY + input.threadId, '1');
      },
    });
  }

  protected override connect(input: RunAgentInput): ReturnType<HttpAgent['run']> {
    if (globalThis.sessionStorage?.getItem(STARTED_KEY + input.threadId) !== '1') {
      return transformHttpEventStream(runHttpRequest(async () => new Response('', { headers: { 'content-type': 'text/event-stream' } })));
    }
    const url = new URL(`threads/${encodeURIComponent(input.threadId)}/events`, new URL('.', this.url));
    return transformHttpEventStream(
      runHttpRequest(() =>
        this.fetch(url.href, { method: 'GET', headers: { ...this.headers, accept: 'text/event-stream' }, signal: this.abortController.signal }),
      ),
    );
  }

  override clone(): AgentRxAgent {
    const copy = new AgentRxAgent({
      url: this.url,
      headers: { ...this.headers },
      agentId: this.agentId,
      threadId: this.threadId,
      description: this.description,
    });
    copy.setMessages(this.messages);
    copy.setState(this.state);
    return copy;
  }
}
