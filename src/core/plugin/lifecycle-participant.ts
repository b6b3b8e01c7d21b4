/**
 * Process-level lifecycle of providers and tool handlers, run by the Kernel: started after
 * config validation (tools, then the configured provider), stopped in reverse. A provider a
 * session selects later is started when it is first built. (Consumers are not participants:
 * their `start`/`stop` are per session, run by the consumer hub.)
 * Each hook is awaited, time-bounded and isolated: one that throws or hangs is logged and the
 * others still run. `stop` is called at most once.
 */
export interface LifecycleParticipant {
  start?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}
