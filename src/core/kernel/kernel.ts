import type { Logger } from '../logger.js';
import { withTimeout } from '../util/async.js';
import type { LifecycleParticipant } from '../plugin/lifecycle-participant.js';

/** One named phase participant. */
export interface Participant extends LifecycleParticipant {
  readonly id?: string;
  readonly name?: string;
}

/**
 * Runs start/stop phases: `start` goes phase by phase in the given order (consumers, tools,
 * providers); `stop` in reverse. Every hook is awaited with a timeout and isolated (allSettled +
 * log). `stop` runs once; later calls return the same promise.
 */
export class Kernel {
  private stopping: Promise<void> | undefined;
  private started = false;
  private readonly signalHandlers: [NodeJS.Signals, () => void][] = [];

  constructor(
    private readonly phases: readonly (readonly [string, readonly Participant[]])[],
    private readonly logger: Logger,
    private readonly phaseTimeoutMs = 10_000,
    private readonly onStopped: () => Promise<void> = async () => undefined,
  ) {}

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    for (const [name, ps] of this.phases) await this.runPhase(`start ${name}`, ps, (p) => p.start?.());
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const [sig, h] of this.signalHandlers) process.off(sig, h);
      if (this.started) {
        for (const [name, ps] of [...this.phases].reverse()) await this.runPhase(`stop ${name}`, [...ps].reverse(), (p) => p.stop?.());
      }
      try {
        await withTimeout(this.onStopped(), this.phaseTimeoutMs, 'cleanup');
      } catch (e) {
        this.logger.error('kernel cleanup failed', { error: (e as Error).message });
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

  private async runPhase(phase: string, ps: readonly Participant[], hook: (p: Participant) => unknown): Promise<void> {
    const results = await Promise.allSettled(ps.map((p) => withTimeout(Promise.resolve().then(() => hook(p)), this.phaseTimeoutMs, phase)));
    results.forEach((r, i) => {
      if (r.status === 'rejected') {
        const p = ps[i]!;
        this.logger.error(`${phase}: ${p.id ?? p.name ?? p.constructor.name} failed`, { error: r.reason instanceof Error ? r.reason.message : String(r.reason) });
      }
    });
  }
}
