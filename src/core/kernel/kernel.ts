import type { Logger } from '../logger.js';
import { MAX_TIMER_MS, messageOf, withTimeout } from '../util/async.js';
import type { LifecycleParticipant } from '../plugin/lifecycle-participant.js';

/** One named phase participant. */
export interface Participant extends LifecycleParticipant {
  readonly id?: string;
  readonly name?: string;
  /**
   * The participant's own bound of its `start()`, in ms, when it knows it may need longer than its
   * phase allows (an MCP tool source waits for child processes that may first download packages).
   * The kernel bounds that `start()` by the longer of this and the phase's `timeoutMs`; `stop()`
   * keeps the phase's bound. A participant with a bound of its own inside `start()` declares more
   * than it, so that its own (more precise) error comes out first.
   */
  readonly startTimeoutMs?: number;
}

/** One kernel phase: who takes part, and how long each of their hooks may run. */
export interface KernelPhase {
  /** Shown in log lines (`start tools: <id> failed`). */
  readonly name: string;
  /** Started in this order, stopped in reverse. */
  readonly participants: readonly Participant[];
  /**
   * Bound of each participant's `start()` and of its `stop()`, in ms (`timeouts.toolsPhaseMs`, …);
   * a participant that declares a longer `startTimeoutMs` gets that for its `start()`.
   */
  readonly timeoutMs: number;
}

/** The final step of `Kernel.stop`, after every phase has stopped. */
export interface KernelCleanup {
  /** Releases what the phases leave behind (e.g. `container.unbindAllAsync()`). May be async. */
  readonly run: () => Promise<void>;
  /** Bound of `run`, in ms (`timeouts.cleanupMs`); past it the kernel logs and returns. */
  readonly timeoutMs: number;
}

/**
 * Runs process-level start/stop phases, in the order given: tool handlers, then providers (what
 * the composition root passes). Consumers are not a phase: they are attached per session.
 * `start` goes phase by phase; `stop` goes through the started phases in reverse, participants
 * in reverse, then runs the cleanup. Every hook is awaited with its phase's timeout (a `start()`
 * with the participant's own `startTimeoutMs` when that is longer) and isolated: one that throws,
 * rejects or overruns is logged and the others still run (allSettled). Neither `start` nor `stop`
 * rejects. `stop` runs once; later calls return the same promise.
 */
export class Kernel {
  private stopping: Promise<void> | undefined;
  private started = false;
  private readonly signalHandlers: [NodeJS.Signals, () => void][] = [];

  /**
   * @param phases started in this order, stopped in reverse.
   * @param logger receives one error line per failed hook and for a failed cleanup.
   * @param cleanup runs once at the end of `stop` (whether or not `start` ran); default: nothing.
   */
  constructor(
    private readonly phases: readonly KernelPhase[],
    private readonly logger: Logger,
    private readonly cleanup: KernelCleanup = { run: async () => undefined, timeoutMs: 10_000 },
  ) {}

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    for (const phase of this.phases)
      await this.runPhase(
        `start ${phase.name}`,
        phase.participants,
        (p) => startBound(p, phase.timeoutMs),
        (p) => p.start?.(),
      );
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const [sig, h] of this.signalHandlers) process.off(sig, h);
      if (this.started) {
        for (const phase of [...this.phases].reverse()) {
          await this.runPhase(
            `stop ${phase.name}`,
            [...phase.participants].reverse(),
            () => phase.timeoutMs,
            (p) => p.stop?.(),
          );
        }
      }
      try {
        await withTimeout(
          Promise.resolve().then(() => this.cleanup.run()),
          this.cleanup.timeoutMs,
          'cleanup',
        );
      } catch (e) {
        this.logger.error('kernel cleanup failed', { error: messageOf(e) });
      }
    })();
    return this.stopping;
  }

  /** Wires SIGINT/SIGTERM to `stop` (once); the handlers are removed on stop. */
  handleSignals(onSignal: (sig: NodeJS.Signals) => void = () => undefined): void {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      const h = (): void => {
        onSignal(sig);
        void this.stop();
      };
      process.once(sig, h);
      this.signalHandlers.push([sig, h]);
    }
  }

  private async runPhase(phase: string, ps: readonly Participant[], timeoutOf: (p: Participant) => number, hook: (p: Participant) => unknown): Promise<void> {
    const results = await Promise.allSettled(
      ps.map((p) =>
        withTimeout(
          Promise.resolve().then(() => hook(p)),
          timeoutOf(p),
          phase,
        ),
      ),
    );
    results.forEach((r, i) => {
      if (r.status === 'rejected') {
        const p = ps[i]!;
        this.logger.error(`${phase}: ${p.id ?? p.name ?? p.constructor.name} failed`, { error: messageOf(r.reason) });
      }
    });
  }
}

/**
 * The bound of `p.start()` in ms: `phaseMs`, or the participant's own `startTimeoutMs` when that is
 * longer (a finite number; capped at the longest timer delay).
 */
export function startBound(p: Participant, phaseMs: number): number {
  const own = p.startTimeoutMs;
  return typeof own === 'number' && Number.isFinite(own) && own > phaseMs ? Math.min(own, MAX_TIMER_MS) : phaseMs;
}
