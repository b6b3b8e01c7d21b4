import { AgentRxError, type ErrorCode } from '../errors.js';

/**
 * True for the error Node (or a test runner's resolver) raises when a package is not installed:
 * the signal that an optional peer dependency is missing.
 */
export function isModuleNotFound(e: unknown): boolean {
  const o = (typeof e === 'object' && e !== null ? e : {}) as { code?: unknown; message?: unknown };
  if (o.code === 'ERR_MODULE_NOT_FOUND' || o.code === 'MODULE_NOT_FOUND') return true;
  return typeof o.message === 'string' && /Cannot find (module|package)/.test(o.message);
}

/** What {@link importOptionalPeer} says when the package is missing. */
export interface OptionalPeer {
  /** The package imported. */
  readonly name: string;
  /** What needs it, as the message names it: "the worker pool (runtime.mode 'distributed')". */
  readonly feature: string;
  /** Every package to install for that feature (default: `name`). */
  readonly install?: readonly string[];
  /** The error code of the one-line error (default `invalid_config`: the configuration selected it). */
  readonly code?: ErrorCode;
}

/** The one-line error for a missing optional package: the feature, the package, the `npm install` command; `details.package` names it. */
export function missingPeerError(peer: OptionalPeer): AgentRxError {
  const install = (peer.install ?? [peer.name]).join(' ');
  return new AgentRxError(peer.code ?? 'invalid_config', `${peer.feature} needs the optional package ${peer.name}: npm install ${install}`, {
    package: peer.name,
    install,
  });
}

/**
 * Imports an optional peer dependency on first use. A missing package becomes one `AgentRxError`
 * line naming the feature and the `npm install` command, with `details.package`; any other load
 * failure is reported with its message. Never cached here: callers cache the promise and drop it
 * on failure, so installing the package and trying again works.
 */
export async function importOptionalPeer<T>(peer: OptionalPeer, importer: () => Promise<T>): Promise<T> {
  try {
    return await importer();
  } catch (e) {
    if (isModuleNotFound(e)) throw missingPeerError(peer);
    throw new AgentRxError(peer.code ?? 'invalid_config', `cannot load ${peer.name} for ${peer.feature}: ${e instanceof Error ? e.message : String(e)}`, {
      package: peer.name,
    });
  }
}
