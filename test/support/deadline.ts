/** `p`, or a rejection naming `what` after `ms` (a deadline for a test's wait, not a synchronization). */
export async function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
