import { Observable } from 'rxjs';
import { AgentRx, type AgentRxCreateOptions } from '../../../src/agentrx.js';
import type { ConfigIssue } from '../../../src/core/config/index.js';
import { injectable } from '../../../src/core/util/inversify.js';
import { AgentRxError } from '../../../src/core/errors.js';
import type { RawEvent } from '../../../src/core/model.js';
import { ScriptedProvider } from '../../../src/testing/scripted-provider.js';
import { TestProviderBase } from '../session/session-parts.fixtures.js';

async function createError(config: object, providers?: AgentRxCreateOptions['providers']): Promise<AgentRxError> {
  try {
    const rx = await AgentRx.create({ config: { logLevel: 'silent', consumers: { terminal: false }, ...config }, ...(providers ? { providers } : {}) });
    await rx.stop();
  } catch (e) {
    if (e instanceof AgentRxError) return e;
    throw e;
  }
  throw new Error('expected AgentRx.create to fail');
}

const pathsOf = (e: AgentRxError): string[] => ((e.details?.issues as ConfigIssue[] | undefined) ?? []).map((i) => i.path);

/** A host's own provider bound as a class: its id is known only once it is built. */
@injectable()
class ClassProvider extends TestProviderBase {
  readonly id = 'class-built';
  readonly mode = 'request_response' as const;
  pollTurn(): Observable<RawEvent> {
    return new Observable((sub) => sub.complete());
  }
}

describe('AgentRx.create with a provider id no plugin has', () => {
  describe('when the config has another problem too', () => {
    it('should fail with one invalid_config listing both, and the known ids', async () => {
      const error = await createError({ provider: 'locl', limits: { maxTurns: 0 } });
      expect(error.code).toBe('invalid_config');
      expect(pathsOf(error)).toEqual(['limits.maxTurns', 'provider']);
      expect(error.message).toContain('(did you mean "local"?); known: local, claude-managed-agents, bedrock-agentcore');
    });
  });

  describe('when the host passed a provider instance', () => {
    it('should count its id as known', async () => {
      const scripted = new ScriptedProvider({ id: 'scripted', mode: 'request_response', turns: [] });
      const error = await createError({ provider: 'scriptd' }, [scripted]);
      expect(pathsOf(error)).toEqual(['provider']);
      expect(error.message).toContain('known: local, claude-managed-agents, bedrock-agentcore, scripted');
    });
  });

  describe('when a provider is bound as a class (its id is known only once built)', () => {
    it('should still fail with invalid_config at provider, listing the built id', async () => {
      const error = await createError({ provider: 'nope' }, [ClassProvider]);
      expect(error.code).toBe('invalid_config');
      expect(pathsOf(error)).toEqual(['provider']);
      expect(error.message).toContain('class-built');
    });
  });
});
