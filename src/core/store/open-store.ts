import { configError } from '../config/config-issue.js';
import type { ConfigIssue } from '../config/config-issue.js';
import { isPlainObject } from '../config/plain-object.js';
import { type StoreConfig, validateStoreSection } from '../config/store-config.js';
import { AgentRxError } from '../errors.js';
import type { SessionStore } from './session-store.js';
import type { StoreOpenOptions, StoreRegistration } from './store-registration.js';

/**
 * Opens the store a `store` section describes, through the engine registered for its `type`:
 * what the container's SessionStore binding does with the validated config, and what the CLI
 * does with a section it builds (`{ type: 'file', dir }`). A section that its engine's class did
 * not validate yet (a plain object) is validated here first, with the config's rules and messages.
 *
 * Throws `invalid_config` for an unregistered type (listing the registered ones) or an invalid
 * section, and `duplicate_plugin` when two registrations share a type.
 */
export function openStore(
  section: StoreConfig | Readonly<Record<string, unknown>>,
  registrations: readonly StoreRegistration[],
  opts: StoreOpenOptions = {},
): SessionStore {
  const engine = storeEngineOf(section, registrations);
  return engine.registration.open(engine.section, opts);
}

/**
 * The registration that `section`'s type names and the section as validated by its class (as is,
 * when it already is one): what `openStore` and `openProvisionStore` open. Throws as `openStore`.
 */
export function storeEngineOf(
  section: StoreConfig | Readonly<Record<string, unknown>>,
  registrations: readonly StoreRegistration[],
): { readonly registration: StoreRegistration; readonly section: StoreConfig } {
  checkStoreTypes(registrations);
  const registration = registrations.find((r) => r.type === (section.type ?? 'memory'));
  if (registration !== undefined && section instanceof registration.options) return { registration, section };
  const issues: ConfigIssue[] = [];
  const validated = validateStoreSection(isPlainObject(section) ? section : { ...section }, registrations, issues);
  if (issues.length > 0) throw configError(issues, undefined);
  // Validation succeeded, so the type names a registration and `validated` is its section class.
  const chosen = registrations.find((r) => r.type === validated.type);
  if (chosen === undefined) throw new AgentRxError('invalid_config', `no store engine is registered as '${validated.type}'`, { type: validated.type });
  return { registration: chosen, section: validated };
}

/** Throws `duplicate_plugin` when two registrations share a type (which one would run is not clear). */
export function checkStoreTypes(registrations: readonly StoreRegistration[]): void {
  const seen = new Set<string>();
  for (const r of registrations) {
    if (seen.has(r.type))
      throw new AgentRxError('duplicate_plugin', `two store engines are registered as '${r.type}': load only one module that registers it`, { type: r.type });
    seen.add(r.type);
  }
}
