/**
 * Resolves on SIGINT, SIGTERM or when `signal` aborts; removes its listeners. The long-running
 * commands (`serve`, `worker`) wait on it before they stop gracefully.
 */
export function untilStopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      signal?.removeEventListener('abort', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    signal?.addEventListener('abort', stop, { once: true });
    if (signal?.aborted) stop();
  });
}
