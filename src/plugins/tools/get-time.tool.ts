import { IsOptional, IsString, IsTimeZone, MaxLength } from '../../core/util/class-validator.js';
import { JSONSchema } from '../../core/util/class-validator.js';
import { inject, injectable } from '../../core/util/inversify.js';
import type { ToolContext, ToolHandler } from '../../core/plugin/tool-handler.js';
import { Clock } from './tools.config.js';

/** Input of `get_time`. */
export class GetTimeInput {
  /** IANA time zone such as `Europe/Paris`; the process's zone when absent. */
  @JSONSchema({ description: 'IANA time zone name, e.g. "Europe/Paris". Defaults to the local time zone.' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  @IsTimeZone()
  timeZone?: string;
}

/** What `get_time` returns (as a JSON object). */
export interface GetTimeResult extends Record<string, unknown> {
  /** ISO 8601 local time in `timeZone` with its UTC offset, e.g. `2024-03-10T09:30:00.000-04:00`. */
  readonly iso: string;
  /** IANA name of the zone used (as asked, with canonical letter case). */
  readonly timeZone: string;
  /** Human-readable en-US date and time, e.g. `Sunday, March 10, 2024 at 9:30:00 AM EDT`. */
  readonly formatted: string;
}

/**
 * `get_time`: the current date and time in a time zone. Read-only, so idempotent. The time comes
 * from the injected {@link Clock}.
 */
@injectable()
export class GetTimeToolHandler implements ToolHandler<GetTimeInput> {
  readonly name = 'get_time';
  readonly description =
    'Returns the current date and time as JSON { iso, timeZone, formatted }. ' +
    'Optional input timeZone is an IANA zone name such as "America/New_York"; defaults to the local zone.';
  readonly inputType = GetTimeInput;
  readonly idempotent = true;

  constructor(@inject(Clock) private readonly clock: Clock) {}

  handle(input: GetTimeInput, ctx: ToolContext): GetTimeResult {
    ctx.signal.throwIfAborted();
    const now = this.clock.now();
    if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new Error('the clock returned an invalid date');
    const timeZone = resolveTimeZone(input.timeZone);
    return {
      iso: isoInZone(now, timeZone),
      timeZone,
      formatted: new Intl.DateTimeFormat('en-US', { timeZone, dateStyle: 'full', timeStyle: 'long' }).format(now),
    };
  }
}

/**
 * The name to report for `timeZone`, or the process's zone when undefined. Letter case is
 * canonicalized (`europe/paris` → `Europe/Paris`), but a valid name is otherwise kept as asked:
 * ICU would report some current names by a legacy alias (`Asia/Kolkata` as `Asia/Calcutta`).
 */
function resolveTimeZone(timeZone: string | undefined): string {
  let resolved: string | undefined;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
  } catch {
    throw new Error(`unknown time zone '${timeZone}'; use an IANA name such as "Europe/Paris"`);
  }
  if (timeZone === undefined) return resolved ?? 'UTC';
  return resolved !== undefined && resolved.toLowerCase() === timeZone.toLowerCase() ? resolved : timeZone;
}

/** `date` as ISO 8601 wall-clock time in `timeZone`, with that zone's offset at that instant. */
function isoInZone(date: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(date);
  const field = (type: Intl.DateTimeFormatPartTypes): number => Number(parts.find((p) => p.type === type)?.value);
  const [year, month, day, hour, minute, second] = (['year', 'month', 'day', 'hour', 'minute', 'second'] as const).map(field) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = date.getUTCMilliseconds();
  // The offset is the zone's wall clock minus UTC at this instant, whole seconds compared.
  const offsetMinutes = Math.round((Date.UTC(year, month - 1, day, hour, minute, second) - (date.getTime() - ms)) / 60_000);
  const pad = (n: number, width = 2): string => String(Math.abs(n)).padStart(width, '0');
  const sign = offsetMinutes < 0 ? '-' : '+';
  const offset = `${sign}${pad(Math.trunc(Math.abs(offsetMinutes) / 60))}:${pad(Math.abs(offsetMinutes) % 60)}`;
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}.${pad(ms, 3)}${offset}`;
}
