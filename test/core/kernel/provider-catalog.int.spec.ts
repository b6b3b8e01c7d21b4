import { Observable } from 'rxjs';
import { AgentRx } from '../../../src/agentrx.js';
import { bindProvider } from '../../../src/core/di/bind-plugin.js';
import { ContainerModule, inject, injectable } from '../../../src/core/util/inversify.js';
import type { RawEvent } from '../../../src/core/model.js';
import { TestProviderBase } from '../session/session-parts.fixtures.js';
import type { TurnProvider } from '../../../src/core/plugin/agent-provider.js';

/** Options a provider cannot be built without (like a config section that was never given). */
const NeedsSection = Symbol('NeedsSection');

/** Records what happens to each built provider, by id. */
const log: string[] = [];

abstract class CountingProvider extends TestProviderBase implements TurnProvider {
  readonly mode = 'request_response' as const;
  constructor() {
    super();
    log.push(`build ${this.constructor.name}`);
  }
  start(): void {
    log.push(`start ${this.id}`);
  }
  stop(): void {
    log.push(`stop ${this.id}`);
  }
  pollTurn(): Observable<RawEvent> {
    return new Observable((sub) => {
      sub.next({ type: 'done', id: `${this.id}-${log.length}` });
      sub.complete();
    });
  }
}

@injectable()
class AlphaProvider extends CountingProvider {
  readonly id = 'alpha';
}

@injectable()
class BetaProvider extends CountingProvider {
  readonly id = 'beta';
}

/** Cannot be built: its options are never bound. */
@injectable()
class GammaProvider extends CountingProvider {
  readonly id = 'gamma';
  constructor(@inject(NeedsSection) readonly options: object) {
    super();
  }
}

const catalogModule = new ContainerModule((options) => {
  bindProvider(options, 'alpha', AlphaProvider);
  bindProvider(options, 'beta', BetaProvider);
  bindProvider(options, 'gamma', GammaProvider);
});

async function create(provider: string): Promise<AgentRx> {
  return AgentRx.create<string>({ defaults: false, modules: [catalogModule], config: { provider, consumers: { terminal: false } } });
}

describe('ProviderCatalog (through AgentRx)', () => {
  beforeEach(() => (log.length = 0));

  describe('when one of three registered providers is configured', () => {
    it('should build and start only that one, and list every id', async () => {
      const rx = await create('alpha');
      expect(log).toEqual(['build AlphaProvider', 'start alpha']);
      expect(rx.pluginIds.providers.sort()).toEqual(['alpha', 'beta', 'gamma']);
      await rx.stop();
      expect(log).toEqual(['build AlphaProvider', 'start alpha', 'stop alpha']);
    });
  });

  describe('when a session selects another registered provider', () => {
    it('should build and start it before the session uses it, once, and stop it with the instance', async () => {
      const rx = await create('alpha');
      const first = await rx.run({ provider: 'beta' });
      const second = await rx.run({ provider: 'beta' });
      expect([first.text, second.text]).toEqual(['beta', 'beta']);
      await rx.stop();
      expect(log).toEqual(['build AlphaProvider', 'start alpha', 'build BetaProvider', 'start beta', 'stop beta', 'stop alpha']);
    });
  });

  describe('when a session selects a provider that cannot be built', () => {
    it('should fail that call with invalid_config naming the provider and its section, and leave the instance usable', async () => {
      const rx = await create('alpha');
      expect(() => rx.start({ provider: 'gamma' })).toThrow(
        expect.objectContaining({ code: 'invalid_config', message: expect.stringContaining("cannot build provider 'gamma'") }),
      );
      await expect(rx.run()).resolves.toMatchObject({ text: 'alpha' });
      await rx.stop();
    });
  });

  describe('when the configured provider is unknown', () => {
    it('should fail create with invalid_config listing the known ids', async () => {
      await expect(create('delta')).rejects.toMatchObject({ code: 'invalid_config', message: expect.stringContaining('known: alpha, beta, gamma') });
    });
  });

  describe('when two registrations share an id', () => {
    it('should fail create with duplicate_plugin naming both classes', async () => {
      const twice = new ContainerModule((options) => bindProvider(options, 'alpha', BetaProvider));
      await expect(
        AgentRx.create<'alpha'>({ defaults: false, modules: [catalogModule, twice], config: { provider: 'alpha', consumers: { terminal: false } } }),
      ).rejects.toMatchObject({
        code: 'duplicate_plugin',
        message: expect.stringMatching(/AlphaProvider.*BetaProvider/),
      });
    });
  });
});
