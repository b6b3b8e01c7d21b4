import { ProviderRegistration } from '../src/core/plugin/provider-registration.js';
import { Container } from '../src/core/util/inversify.js';
import { BUILTIN_PROVIDER_IDS, defaultModules } from '../src/default-modules.js';

describe('BUILTIN_PROVIDER_IDS', () => {
  it('should be exactly the ids the default modules register, in their order', () => {
    const container = new Container();
    container.load(...defaultModules());
    expect(container.getAll<ProviderRegistration>(ProviderRegistration).map((r) => r.id)).toEqual([...BUILTIN_PROVIDER_IDS]);
  });
});
