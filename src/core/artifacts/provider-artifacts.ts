import { AgentRxError } from '../errors.js';
import type { AgentProvider } from '../plugin/agent-provider.js';
import type { Artifacts } from './artifacts.js';

/**
 * The artifacts of `sessionId` on `provider` (`handle`: what its `provision` returned, when
 * known). Throws `unsupported` naming the provider when it has no session storage, and whatever
 * the provider's `artifacts` throws (`invalid_config`, `invalid_options`).
 */
export function providerArtifacts(provider: AgentProvider, sessionId: string, handle?: unknown): Artifacts {
  if (typeof sessionId !== 'string' || sessionId.length === 0)
    throw new AgentRxError('invalid_options', 'artifacts(sessionId): sessionId must be a non-empty string');
  if (!provider.artifacts) {
    throw new AgentRxError('unsupported', `the ${provider.id} provider has no session artifacts (claude-managed-agents and bedrock-agentcore have them)`, {
      providerId: provider.id,
    });
  }
  return provider.artifacts(sessionId, handle);
}

/**
 * The artifacts a tool of a session sees (`ToolContext.artifacts`): undefined before the session
 * has a provider-side id, when the provider has none, or when the provider cannot serve them
 * (not configured for it): a tool then works without them.
 */
export function toolArtifacts(provider: AgentProvider, sessionId: string | undefined, handle?: unknown): Artifacts | undefined {
  if (sessionId === undefined || !provider.artifacts) return undefined;
  try {
    return provider.artifacts(sessionId, handle);
  } catch {
    return undefined;
  }
}
