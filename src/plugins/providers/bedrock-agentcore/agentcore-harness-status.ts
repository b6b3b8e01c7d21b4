/** How the ready-wait treats a harness status. */
export type HarnessStatusClass = 'ready' | 'waiting' | 'terminating' | 'failed' | 'unknown';

/**
 * `READY` → ready; `CREATING`/`UPDATING` → keep waiting; `DELETING` → terminating;
 * `*_FAILED` → failed; anything else (or nothing) → unknown, which is fatal.
 */
export function classifyHarnessStatus(status: unknown): HarnessStatusClass {
  switch (status) {
    case 'READY':
      return 'ready';
    case 'CREATING':
    case 'UPDATING':
      return 'waiting';
    case 'DELETING':
      return 'terminating';
    case 'CREATE_FAILED':
    case 'UPDATE_FAILED':
    case 'DELETE_FAILED':
      return 'failed';
    default:
      return 'unknown';
  }
}
