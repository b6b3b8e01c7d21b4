import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { eventFrame } from './frames.js';

/**
 * `InvokeAgentRuntimeCommand` of the AgentCore emulator (`POST /runtimes/{arn}/commands`): a
 * small interpreter of exactly the shell commands agentrx's session storage sends, over an
 * in-memory file system per runtime session, answered as the service does — event-stream
 * `chunk` frames carrying `contentStart`, `contentDelta{stdout|stderr}` and
 * `contentStop{exitCode, status}`.
 *
 * Understood (paths single-quoted): `ls -lAn --time-style=+%s -- '<dir>'`, `base64 -w 0 --
 * '<path>'`, `printf '%s' '<base64>' | base64 -d > '<path>'` (or `>>` to append), `mv -f --
 * '<from>' '<to>'`, `rm -- '<path>'`. Anything else exits 127 (`not found`), like a shell
 * without that program. Every folder exists; a missing file gives GNU coreutils' messages.
 */

/** One emulated file: its content as the chunks written (joined only when read). */
interface EmulatedFile {
  chunks: Buffer[];
  size: number;
  /** Modification time, epoch seconds. */
  mtime: number;
}

/** What one command did. */
interface CommandResult {
  readonly exitCode: number;
  /** Stdout pieces (written as separate frames). */
  readonly stdout: Iterable<string>;
  readonly stderr: string;
}

/** Stdout frames carry at most this many characters. */
const STDOUT_FRAME_CHARS = 48 * 1024;

const LS = /^ls -lAn --time-style=\+%s -- '([^']+)'$/;
const READ = /^base64 -w 0 -- '([^']+)'$/;
const WRITE = /^printf '%s' '([A-Za-z0-9+/=]*)' \| base64 -d (>>?) '([^']+)'$/;
const MOVE = /^mv -f -- '([^']+)' '([^']+)'$/;
const REMOVE = /^rm -- '([^']+)'$/;

/** The session file systems of one emulator and the route that runs commands on them. */
export class EmulatedCommands {
  private readonly sessions = new Map<string, Map<string, EmulatedFile>>();
  private clock = 1_767_225_600; // 2026-01-01T00:00:00Z, one second per write

  /** Runs `command` on the file system of `sessionId`. */
  run(sessionId: string, command: string): CommandResult {
    let fs = this.sessions.get(sessionId);
    if (!fs) {
      fs = new Map();
      this.sessions.set(sessionId, fs);
    }
    let m: RegExpExecArray | null;
    if ((m = LS.exec(command))) return this.list(fs, m[1]!);
    if ((m = READ.exec(command))) {
      const f = fs.get(m[1]!);
      if (!f) return fail(1, `base64: ${m[1]}: No such file or directory`);
      return { exitCode: 0, stdout: base64Pieces(f.chunks), stderr: '' };
    }
    if ((m = WRITE.exec(command))) {
      const bytes = Buffer.from(m[1]!, 'base64');
      const old = fs.get(m[3]!);
      if (m[2] === '>>' && old) {
        old.chunks.push(bytes);
        old.size += bytes.length;
        old.mtime = ++this.clock;
      } else fs.set(m[3]!, { chunks: [bytes], size: bytes.length, mtime: ++this.clock });
      return ok();
    }
    if ((m = MOVE.exec(command))) {
      const f = fs.get(m[1]!);
      if (!f) return fail(1, `mv: cannot stat '${m[1]}': No such file or directory`);
      fs.delete(m[1]!);
      fs.set(m[2]!, f);
      return ok();
    }
    if ((m = REMOVE.exec(command))) {
      if (!fs.delete(m[1]!)) return fail(1, `rm: cannot remove '${m[1]}': No such file or directory`);
      return ok();
    }
    return fail(127, `sh: 1: ${command.split(/\s+/)[0] ?? ''}: not found`);
  }

  /**
   * Answers one `InvokeAgentRuntimeCommand` request whose `body` is `{command, timeout}`: 200 with
   * the command's frames. Resolves once the answer is written (honouring backpressure).
   */
  async serve(res: ServerResponse, sessionId: string, body: unknown): Promise<{ exitCode: number; command: string }> {
    const command = typeof body === 'object' && body !== null ? (body as { command?: unknown }).command : undefined;
    const result = typeof command === 'string' ? this.run(sessionId, command) : fail(2, 'sh: 1: Syntax error: no command');
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-bedrock-agentcore-runtime-session-id': sessionId });
    const write = async (frame: Uint8Array): Promise<void> => {
      if (!res.write(frame)) await once(res, 'drain');
    };
    await write(eventFrame('chunk', { contentStart: {} }));
    for (const piece of result.stdout) {
      if (res.destroyed) return { exitCode: result.exitCode, command: String(command) };
      await write(eventFrame('chunk', { contentDelta: { stdout: piece } }));
    }
    if (result.stderr !== '') await write(eventFrame('chunk', { contentDelta: { stderr: `${result.stderr}\n` } }));
    await write(eventFrame('chunk', { contentStop: { exitCode: result.exitCode, status: 'COMPLETED' } }));
    res.end();
    return { exitCode: result.exitCode, command: String(command) };
  }

  private list(fs: Map<string, EmulatedFile>, dir: string): CommandResult {
    const prefix = `${dir.replace(/\/+$/, '')}/`;
    const lines: string[] = [];
    for (const [path, f] of [...fs].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const name = path.slice(prefix.length);
      if (!path.startsWith(prefix) || name.includes('/')) continue;
      lines.push(`-rw-r--r-- 1 0 0 ${f.size} ${f.mtime} ${name}`);
    }
    const blocks = lines.length === 0 ? 0 : lines.length * 4;
    return { exitCode: 0, stdout: [[`total ${blocks}`, ...lines].join('\n') + '\n'], stderr: '' };
  }
}

function ok(): CommandResult {
  return { exitCode: 0, stdout: [], stderr: '' };
}

function fail(exitCode: number, stderr: string): CommandResult {
  return { exitCode, stdout: [], stderr };
}

/** The base64 of `chunks` as one stream of text, in pieces of at most `STDOUT_FRAME_CHARS` characters. */
function* base64Pieces(chunks: readonly Buffer[]): Generator<string> {
  const raw = (STDOUT_FRAME_CHARS / 4) * 3;
  let carry = Buffer.alloc(0);
  for (const c of chunks) {
    let buf = carry.length > 0 ? Buffer.concat([carry, c]) : c;
    while (buf.length >= raw) {
      yield buf.subarray(0, raw).toString('base64');
      buf = buf.subarray(raw);
    }
    carry = Buffer.from(buf);
  }
  if (carry.length > 0) yield carry.toString('base64');
}

/** The runtime session header of a request, when it is a valid runtime session id. */
export function runtimeSessionOf(req: IncomingMessage): string | undefined {
  const sid = req.headers['x-amzn-bedrock-agentcore-runtime-session-id'];
  return typeof sid === 'string' && /^[a-zA-Z0-9][a-zA-Z0-9_-]{32,99}$/.test(sid) ? sid : undefined;
}
