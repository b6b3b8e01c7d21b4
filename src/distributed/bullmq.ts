import { importOptionalPeer } from '../core/util/optional-peer.js';

/** The BullMQ module, as the worker pool uses it. */
export type BullMq = typeof import('bullmq');

let loaded: Promise<BullMq> | undefined;

/**
 * BullMQ, imported at the first use of the worker pool (submit, a worker, the pool monitor), so
 * that `agentrx` and its CLI load without it. A missing package is one `invalid_config` line
 * naming what to install; a failed import is not cached.
 */
export function loadBullmq(): Promise<BullMq> {
  loaded ??= importOptionalPeer(
    { name: 'bullmq', feature: "the worker pool (runtime.mode 'distributed')", install: ['ioredis', 'bullmq'] },
    () => import('bullmq'),
  ).catch((e: unknown) => {
    loaded = undefined;
    throw e;
  });
  return loaded;
}
