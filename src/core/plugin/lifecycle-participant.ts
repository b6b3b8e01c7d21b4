/**
 * Process-level lifecycle of providers and tool handlers, run by the Kernel: started after
 * config validation (consumers' registry first, then tools, then providers), stopped in reverse.
 * Each hook is awaited, time-bounded and isolated: one that throws or hangs is logged and the
 * others still run. `stop` is called at most once.
 */
export interface LifecycleParticipant {
  start?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}
