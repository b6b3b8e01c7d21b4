import type { Observable } from 'rxjs';
import type { TranslatedEvent } from '../events/translated-event.js';
import type { Logger } from '../logger.js';
import type { AgentSpec } from '../model.js';
import type { AgentProvider } from '../plugin/agent-provider.js';
import type { SessionStore } from '../store/session-store.js';
import type { ToolDispatcher } from '../tools/tool-dispatcher.js';
import type { ConsumerAttachment } from './consumer-hub.js';

/** What a Session needs from its container. */
export interface SessionDeps {
  readonly provider: AgentProvider;
  readonly dispatcher: ToolDispatcher;
  readonly store: SessionStore;
  readonly spec: AgentSpec;
  /** Provisions (or looks up) the provider-side agent; its handle goes to `open`. */
  provision(): Promise<unknown>;
  readonly logger: Logger;
  /** Attaches the consumers to the session's envelopes paired with their AG-UI translation. */
  attachConsumers(translated$: Observable<TranslatedEvent>, sessionId: () => string | undefined): ConsumerAttachment;
  /** Bound on the best-effort host interrupt sent on cancel or timeout (`timeouts.interruptMs`). */
  readonly interruptTimeoutMs: number;
  /** Called once when the session has fully closed. */
  onClosed?(): void;
}
