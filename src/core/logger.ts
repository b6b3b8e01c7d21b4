/**
 * Where agentrx writes diagnostics. The default writes to stderr so stdout stays with the
 * consumers. Implementations must never receive secrets: callers redact first.
 */
export const Logger = Symbol('Logger');

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const order = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof order;

/** Writes one line per message to stderr, at or above `level`. */
export class StderrLogger implements Logger {
  constructor(private readonly level: LogLevel = 'warn') {}
  private write(lvl: Exclude<LogLevel, 'silent'>, message: string, fields?: Record<string, unknown>): void {
    if (order[lvl] < order[this.level]) return;
    const extra = fields && Object.keys(fields).length > 0 ? ' ' + safeJson(fields) : '';
    process.stderr.write(`agentrx ${lvl}: ${message}${extra}\n`);
  }
  debug(m: string, f?: Record<string, unknown>): void {
    this.write('debug', m, f);
  }
  info(m: string, f?: Record<string, unknown>): void {
    this.write('info', m, f);
  }
  warn(m: string, f?: Record<string, unknown>): void {
    this.write('warn', m, f);
  }
  error(m: string, f?: Record<string, unknown>): void {
    this.write('error', m, f);
  }
}

/** A logger that keeps lines in memory (tests, embedding). */
export class MemoryLogger implements Logger {
  readonly lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  debug(message: string, fields?: Record<string, unknown>): void {
    this.lines.push({ level: 'debug', message, fields });
  }
  info(message: string, fields?: Record<string, unknown>): void {
    this.lines.push({ level: 'info', message, fields });
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.lines.push({ level: 'warn', message, fields });
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.lines.push({ level: 'error', message, fields });
  }
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x) => (x instanceof Error ? { name: x.name, message: x.message } : x));
  } catch {
    return '[unserializable]';
  }
}
