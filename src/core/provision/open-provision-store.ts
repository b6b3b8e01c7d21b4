import type { StoreConfig } from '../config/store-config.js';
import { storeEngineOf } from '../store/open-store.js';
import type { StoreOpenOptions, StoreRegistration } from '../store/store-registration.js';
import type { ProvisionStore } from './provision-store.js';

/**
 * Opens the {@link ProvisionStore} of a `store` section through the registration of its engine,
 * as `openStore` opens its SessionStore: what the container's `ProvisionStoreToken` binding does
 * with the validated config, and what the CLI does with a section it builds. A plain section is
 * validated first. The caller owns the store (and its `close`, if it has one).
 *
 * Throws `invalid_config` for an unregistered type or an invalid section, and `duplicate_plugin`
 * when two registrations share a type.
 */
export function openProvisionStore(
  section: StoreConfig | Readonly<Record<string, unknown>>,
  registrations: readonly StoreRegistration[],
  opts: StoreOpenOptions = {},
): ProvisionStore {
  const engine = storeEngineOf(section, registrations);
  return engine.registration.openProvisions(engine.section, opts);
}
