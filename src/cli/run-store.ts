import { accessSync, constants as fsConstants, mkdirSync } from 'node:fs';
import { AgentRxError } from '../core/errors.js';
import { coreStores } from '../core/store/core-stores.js';
import { openStore as openEngine } from '../core/store/open-store.js';
import { SessionStore } from '../core/store/session-store.js';
import { openProvisionStore } from '../core/provision/open-provision-store.js';
import type { ProvisionStore } from '../core/provision/provision-store.js';
import { ProvisionStoreToken } from '../core/provision/provision-token.js';
import { ContainerModule } from '../core/util/inversify.js';
import type { CliIo } from './cli-io.js';
import { pathFrom } from './flags.js';
import { storeLocation } from './state-dir.js';

/** The store a `run` (or `serve`) uses, and where it is (for messages). */
export interface RunStore {
  readonly store: SessionStore;
  readonly where: string;
  /** Kept on disk: the session can be resumed by a later command. */
  readonly durable: boolean;
  /**
   * The provision store next to it when the CLI chose the folder (the state directory, or
   * `--store`): what `agentrx agents|harnesses` keep there (versions, tags) is what a run resolves
   * `agent: 'name:tag'` against. Undefined: the config's own `store` section opens it.
   */
  readonly provisions?: ProvisionStore;
}

/** The flags that choose the store: `--store <dir>`, and `--resume <id>` (which needs a durable one). */
export interface RunStoreFlags {
  store?: string;
  resume?: string;
}

/**
 * The store of `run`: `io.store`; else the config file's `store` section (unless `--store`);
 * else the file store in the state directory ({@link storeLocation}). When that directory cannot
 * be created or written, a plain run goes on in memory with a warning; `--store` and `--resume`
 * fail instead. Undefined when the config's section is malformed: `AgentRx.create` reports it.
 */
export function openRunStore(config: Record<string, unknown>, flags: RunStoreFlags, io: CliIo): RunStore | undefined {
  if (io.store) return { store: io.store, where: 'the configured store', durable: true };
  // One run's log, kept whole (no memoryLogLimit): `--record` exports all of it.
  const memory = (): RunStore => ({
    store: openEngine({ type: 'memory', memoryLogLimit: 0, memoryMaxSessions: 0 }, coreStores),
    where: 'memory',
    durable: false,
  });
  const section = config['store'] as { type?: unknown; dir?: unknown } | undefined;
  if (flags.store === undefined && section !== undefined) {
    if (typeof section === 'object' && section !== null && section.type === 'file' && typeof section.dir === 'string' && section.dir !== '') {
      const dir = pathFrom(io.cwd, section.dir);
      return { store: fileStore(dir, io), where: dir, durable: true };
    }
    return typeof section === 'object' && section !== null && (section.type === 'memory' || section.type === undefined) && section.dir === undefined
      ? memory()
      : undefined;
  }
  const loc = storeLocation(flags.store, io.env, io.cwd);
  if (!loc) {
    if (flags.resume !== undefined)
      throw new AgentRxError('invalid_options', 'no state directory to resume from: pass --store <dir>, or set AGENTRX_STATE_DIR, XDG_STATE_HOME or HOME');
    return memory();
  }
  try {
    mkdirSync(loc.dir, { recursive: true });
    accessSync(loc.dir, fsConstants.W_OK);
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    if (flags.store !== undefined || flags.resume !== undefined)
      throw new AgentRxError('store_error', `cannot use the session store ${loc.dir}: ${why}`, { dir: loc.dir });
    io.err.write(`agentrx: warning: cannot use the session store ${loc.dir} (${why}, from ${loc.from}); this session is kept in memory only\n`);
    return memory();
  }
  return { store: fileStore(loc.dir, io), where: loc.dir, durable: true, provisions: openProvisionStore({ type: 'file', dir: loc.dir }, coreStores) };
}

/**
 * The file store in `dir`, opened through its registration (as every engine is); a log it had to
 * repair is named on stderr.
 */
export function fileStore(dir: string, io: CliIo): SessionStore {
  return openEngine({ type: 'file', dir }, coreStores, { onRepair: (file, reason) => io.err.write(`agentrx: warning: ${file}: ${reason}\n`) });
}

/** Binds the run's SessionStore (and its provision store, when it has one): the core module then binds none of its own. */
export function storeModule(run: Pick<RunStore, 'store' | 'provisions'>): ContainerModule {
  return new ContainerModule((options) => {
    options.bind<SessionStore>(SessionStore).toConstantValue(run.store);
    if (run.provisions) options.bind<ProvisionStore>(ProvisionStoreToken).toConstantValue(run.provisions);
  });
}
