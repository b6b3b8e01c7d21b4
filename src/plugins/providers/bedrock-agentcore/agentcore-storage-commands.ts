import type { BedrockAgentCoreClient } from '@aws-sdk/client-bedrock-agentcore';
import { AgentRxError, isAgentRxError } from '../../../core/errors.js';
import { isTransientError, withRetry } from '../../../core/http/retry.js';
import { abortReason } from '../../../core/util/async.js';
import { controlError } from './agentcore-clients.js';
import type { AgentCoreDataSdk } from './agentcore-sdk.js';

/**
 * The shell commands the `bedrock-agentcore` artifacts send to the harness's session storage
 * (`InvokeAgentRuntimeCommand`), and the runner that sends one and reads its streamed output.
 * Only these commands are ever sent (the emulator interprets exactly them):
 *
 * - list: `ls -lAn --time-style=+%s -- '<dir>'`
 * - read: `base64 -w 0 -- '<dir>/<name>'`
 * - write: `printf '%s' '<base64>' | base64 -d > '<part>'`, then `>> '<part>'` per further chunk
 *   (the part file is `<dir>/.<name>.agentrx-part`), then `mv -f -- '<part>' '<dir>/<name>'`
 * - delete: `rm -- '<dir>/<name>'`
 *
 * Every path is single-quoted and made only of checked characters (`[A-Za-z0-9._/-]`), so no
 * name is ever read as shell syntax.
 */

import { AGENTCORE_CHUNK_BYTES, AGENTCORE_MAX_COMMAND_CHARS } from './agentcore-storage-limits.js';

export { AGENTCORE_CHUNK_BYTES, AGENTCORE_MAX_COMMAND_CHARS };

/** Suffix of the hidden file a write goes to before it is renamed into place. */
export const PART_SUFFIX = '.agentrx-part';

/** `'<s>'`: `s` holds only checked characters, so single quotes are enough. */
function q(s: string): string {
  if (!/^[A-Za-z0-9._/-]+$/.test(s)) throw new AgentRxError('invalid_name', `refusing to quote ${JSON.stringify(s)} for a shell command`);
  return `'${s}'`;
}

/** The commands over one storage folder. */
export const storageCommands = {
  list: (dir: string): string => `ls -lAn --time-style=+%s -- ${q(dir)}`,
  read: (path: string): string => `base64 -w 0 -- ${q(path)}`,
  write: (path: string, base64: string, append: boolean): string => `printf '%s' '${base64}' | base64 -d ${append ? '>>' : '>'} ${q(path)}`,
  rename: (from: string, to: string): string => `mv -f -- ${q(from)} ${q(to)}`,
  remove: (path: string): string => `rm -- ${q(path)}`,
};

/** One file line of the list command: `-rw-r--r-- 1 0 0 <size> <epoch seconds> <name>`. */
const LS_FILE = /^-\S*\s+\d+\s+\S+\s+\S+\s+(\d+)\s+(\d+)\s+(.+)$/;

/** The regular files of a list command's output (folders, links and part files left out). */
export function parseListing(stdout: string): { name: string; size: number; createdAt: string }[] {
  const out: { name: string; size: number; createdAt: string }[] = [];
  for (const line of stdout.split('\n')) {
    const m = LS_FILE.exec(line.trim());
    if (!m || m[3]!.endsWith(PART_SUFFIX)) continue;
    out.push({ name: m[3]!, size: Number(m[1]), createdAt: new Date(Number(m[2]) * 1000).toISOString() });
  }
  return out;
}

/** True when a command's stderr says the path does not exist. */
export function saysNoSuchFile(stderr: string): boolean {
  return /No such file or directory/i.test(stderr);
}

/** Where and as whom the commands run. */
export interface CommandTarget {
  readonly harnessArn: string;
  readonly runtimeSessionId: string;
  readonly qualifier?: string;
  /** `timeout` of each command, seconds. */
  readonly timeoutSeconds: number;
  readonly maxRetries: number;
  readonly retryBaseMs: number;
}

/** The SDK client and the command class (loaded lazily by the provider). */
export interface CommandPlane {
  readonly client: BedrockAgentCoreClient;
  readonly sdk: Pick<AgentCoreDataSdk, 'InvokeAgentRuntimeCommandCommand'>;
}

/** What a finished command produced (stdout only when it was not streamed to `onStdout`). */
export interface CommandOutcome {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `command` in the session and resolves with its exit code and output once `contentStop`
 * arrived; `onStdout` (when given) receives stdout as it streams instead of it being collected,
 * and reading waits for the promise it returns (backpressure).
 * An idempotent command (`retry`) is sent again after a transient failure before any output;
 * a write never is. Rejects with `http_error`/`provider_error` (the SDK's failure, see
 * `controlError`), `unexpected_response` for a stream without `contentStop`, or the abort reason.
 */
export async function runCommand(
  plane: () => Promise<CommandPlane>,
  target: CommandTarget,
  command: string,
  o: { readonly signal: AbortSignal; readonly retry: boolean; readonly onStdout?: (text: string) => void | Promise<void> },
): Promise<CommandOutcome> {
  if (command.length > AGENTCORE_MAX_COMMAND_CHARS) {
    throw new AgentRxError('invalid_options', `a storage command of ${command.length} characters is over the ${AGENTCORE_MAX_COMMAND_CHARS} cap`);
  }
  let streamed = false;
  const attempt = async (): Promise<CommandOutcome> => {
    const { client, sdk } = await plane();
    let stdout = '';
    let stderr = '';
    let exitCode: number | undefined;
    try {
      const out = await client.send(
        new sdk.InvokeAgentRuntimeCommandCommand({
          agentRuntimeArn: target.harnessArn,
          runtimeSessionId: target.runtimeSessionId,
          ...(target.qualifier !== undefined ? { qualifier: target.qualifier } : {}),
          body: { command, timeout: target.timeoutSeconds },
        }),
        { abortSignal: o.signal },
      );
      for await (const ev of out.stream ?? []) {
        const chunk = ev.chunk;
        if (!chunk) continue;
        const delta = chunk.contentDelta;
        if (delta?.stdout) {
          streamed = true;
          if (o.onStdout) await o.onStdout(delta.stdout);
          else stdout += delta.stdout;
        }
        if (delta?.stderr && stderr.length < 16_384) stderr += delta.stderr;
        if (chunk.contentStop) {
          exitCode = chunk.contentStop.exitCode ?? -1;
          if (chunk.contentStop.status === 'TIMED_OUT') stderr += `\n(the command timed out after ${target.timeoutSeconds} s)`;
        }
      }
    } catch (e) {
      if (o.signal.aborted) throw abortReason(o.signal);
      if (isAgentRxError(e)) throw e;
      throw controlError('InvokeAgentRuntimeCommand', e);
    }
    if (exitCode === undefined) {
      throw new AgentRxError('unexpected_response', 'InvokeAgentRuntimeCommand ended without contentStop (no exit code)', { transient: true });
    }
    return { exitCode, stdout, stderr: stderr.trim() };
  };
  return withRetry(attempt, {
    maxRetries: target.maxRetries,
    baseMs: target.retryBaseMs,
    signal: o.signal,
    isRetryable: (e) => o.retry && !streamed && isTransientError(e),
  });
}

/** The `command_failed` error of a command that exited non-zero (the command's kind, never its content). */
export function commandFailed(what: string, outcome: CommandOutcome): AgentRxError {
  return new AgentRxError(
    'command_failed',
    `${what} failed on the harness with exit code ${outcome.exitCode}: ${outcome.stderr.slice(0, 300) || '(no output)'}`,
    {
      exitCode: outcome.exitCode,
      stderr: outcome.stderr.slice(0, 1000),
    },
  );
}
