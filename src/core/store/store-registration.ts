import type { StoreConfig, StoreSection } from '../config/store-config.js';
import { AgentRxError } from '../errors.js';
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

/**
 * The registration of the engine `type`: `factory` gets only sections that `options` validated
 * (an instance of it), so it reads its own fields with their types and no cast.
 */
export function defineStore<C extends StoreConfig>(type: string, factory: StoreFactory<C>, options: new () => C): StoreRegistration {
  return {
    type,
    options,
    open(section, opts) {
      if (!(section instanceof options)) {
        throw new AgentRxError(
          'invalid_config',
          `store type '${type}' opens only a section validated by ${options.name}; got ${section.constructor.name} for type '${section.type}'`,
          { type },
        );
      }
      return factory(section, opts);
    },
  };
}
