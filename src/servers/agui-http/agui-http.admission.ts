import type { ServerResponse } from 'node:http';
import type { AgUiHttpOptions } from './agui-http.config.js';
import { sendJson, type HeaderMap } from './agui-http.reply.js';
import type { Run } from './agui-http.run.js';

/**
 * The run limits of the endpoint: runs streaming now in all (`maxConcurrentRuns`) and per client
 * address (`maxRunsPerClient`). A run counts from its admission until it ends (a run whose client
 * left counts until it is cancelled).
 */
export class RunAdmission {
  /** Runs streaming now. */
  activeRuns = 0;
  /** Runs streaming now, per client address. */
  private readonly clientRuns = new Map<string, number>();

  constructor(private readonly options: AgUiHttpOptions) {}

  /** Answers 429 (with `Retry-After`) and returns true when `client` may not start a run now. */
  refuse(res: ServerResponse, cors: HeaderMap, client: string): boolean {
    const { maxConcurrentRuns, maxRunsPerClient } = this.options;
    if (this.activeRuns >= maxConcurrentRuns) return this.tooMany(res, cors, `${this.activeRuns} runs are streaming (limit ${maxConcurrentRuns}); retry later`);
    const mine = this.clientRuns.get(client) ?? 0;
    if (mine >= maxRunsPerClient) return this.tooMany(res, cors, `this client has ${mine} runs streaming (limit ${maxRunsPerClient} per client); retry later`);
    return false;
  }

  /** Answers 429 with `why` (and `Retry-After`); returns true. */
  tooMany(res: ServerResponse, cors: HeaderMap, why: string): true {
    const retryAfterSeconds = this.options.retryAfterSeconds;
    sendJson(res, 429, { error: 'too_many_runs', message: why, retryAfterSeconds }, { ...cors, 'retry-after': String(retryAfterSeconds) });
    return true;
  }

  /** `run` starts counting. */
  count(run: Run): void {
    this.activeRuns++;
    this.clientRuns.set(run.client, (this.clientRuns.get(run.client) ?? 0) + 1);
  }

  /** `run` stops counting (once: callers set `done` first, or it never started); the requests waiting for it go on. */
  uncount(run: Run): void {
    run.whenOver.splice(0).forEach((f) => f());
    this.activeRuns--;
    const left = (this.clientRuns.get(run.client) ?? 1) - 1;
    if (left > 0) this.clientRuns.set(run.client, left);
    else this.clientRuns.delete(run.client);
  }
}
