import type { StoreConfig, StoreSection } from '../config/store-config.js';
import { AgentRxError } from '../errors.js';
import type { ProvisionStore } from '../provision/provision-store.js';
import { MemoryProvisionStore } from './memory/memory-provision-store.js';
import type { SessionStore } from './session-store.js';

/**
 * A store engine a module makes available by type: the `store` section whose `type` names it is
 * validated by its `options` class, and `open` builds the engine from that validated section
 * (when the instance's SessionStore is first resolved, or when the CLI opens a store). Bound with
 * `toConstantValue`, one per engine, by {@link bindStore}; memory and file register from core.
 */
export const StoreRegistration = Symbol('StoreRegistration');

export interface StoreRegistration extends StoreSection {
  /** The engine's stable kebab-case type (what `store.type` names). */
  readonly type: string;
  /** The engine's section class: extends `StoreConfig` with the engine's own fields and their defaults. */
  readonly options: new () => StoreConfig;
  /**
   * Builds the engine from a section validated by `options` (throws `invalid_config` for any other
   * section). Synchronous: an engine that connects somewhere does it at its first call, so a
   * container can build it lazily. The caller owns the store (and its `close`, if it has one).
   */
  open(section: StoreConfig, opts: StoreOpenOptions): SessionStore;
  /**
   * Builds the engine's {@link ProvisionStore} (where provisioned host resources and their tags
   * are remembered) from the same kind of section, with the same rules as `open`: `invalid_config`
   * for a section `options` did not validate, synchronous, owned (and closed) by the caller. An
   * engine registered without a provision factory keeps them in memory, for the store's life.
   */
  openProvisions(section: StoreConfig, opts: StoreOpenOptions): ProvisionStore;
}

/** What every engine may be given besides its section. */
export interface StoreOpenOptions {
  /**
   * Called (synchronously, must not throw) when the engine repaired something it found (a torn
   * journal line, a lock or lease of a dead owner) or left a session it cannot read out of
   * `list()` (a record of the wrong shape): `where` names the file or key. Default: ignored.
   */
  readonly onRepair?: (where: string, what: string) => void;
}

/** How an engine is built from its validated section (see {@link StoreRegistration.open}). */
export type StoreFactory<C extends StoreConfig> = (section: C, opts: StoreOpenOptions) => SessionStore;

/** How an engine's provision store is built from its validated section (see {@link StoreRegistration.openProvisions}). */
export type ProvisionFactory<C extends StoreConfig> = (section: C, opts: StoreOpenOptions) => ProvisionStore;

/**
 * The registration of the engine `type`: `factory` (and `provisions`, when given) get only
 * sections that `options` validated (an instance of it), so they read their own fields with their
 * types and no cast. Without `provisions`, the engine's provision store is a `MemoryProvisionStore`.
 */
export function defineStore<C extends StoreConfig>(
  type: string,
  factory: StoreFactory<C>,
  options: new () => C,
  provisions: ProvisionFactory<C> = () => new MemoryProvisionStore(),
): StoreRegistration {
  const checked = (section: StoreConfig): C => {
    if (!(section instanceof options)) {
      throw new AgentRxError(
        'invalid_config',
        `store type '${type}' opens only a section validated by ${options.name}; got ${section.constructor.name} for type '${section.type}'`,
        { type },
      );
    }
    return section;
  };
  return {
    type,
    options,
    open: (section, opts) => factory(checked(section), opts),
    openProvisions: (section, opts) => provisions(checked(section), opts),
  };
}
