import * as path from 'node:path';
import { plainToInstance } from '../../core/util/class-transformer.js';
import { IsInt, IsNotEmpty, IsOptional, IsString, Max, Min, validateSync } from '../../core/util/class-validator.js';
import { AgentRxError } from '../../core/errors.js';

/**
 * Where `get_time` reads the current time. `demoToolsModule` binds {@link systemClock} unless a
 * `Clock` is already bound; bind a fixed clock first for deterministic demos and tests.
 */
export const Clock = Symbol('Clock');

export interface Clock {
  /** Returns the current instant. Called once per `get_time` call; must be synchronous and not throw. */
  now(): Date;
}

/** The default {@link Clock}: the system time. */
export const systemClock: Clock = { now: () => new Date() };

/** Default for {@link ReadFileOptions.maxBytes}: 64 KiB. */
export const DEFAULT_READ_FILE_MAX_BYTES = 64 * 1024;

/** Upper bound for {@link ReadFileOptions.maxBytes}: the whole read is held in memory. */
export const MAX_READ_FILE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Options of `read_file`, bound with `toConstantValue`. `demoToolsModule` binds
 * `{ root: process.cwd() }` unless `ReadFileOptions` is already bound.
 */
export const ReadFileOptions = Symbol('ReadFileOptions');

export interface ReadFileOptions {
  /**
   * The only directory `read_file` may read from (relative to the process's working directory
   * when not absolute). Symlinks inside it are followed only while they stay inside it.
   */
  readonly root: string;
  /**
   * Most bytes returned per call; a longer file is cut at this size (on a UTF-8 character
   * boundary) and a truncation note is appended. Defaults to {@link DEFAULT_READ_FILE_MAX_BYTES}.
   */
  readonly maxBytes?: number;
}

/** The class-validator form of {@link ReadFileOptions}, used by {@link resolveReadFileOptions}. */
export class ReadFileConfig implements ReadFileOptions {
  @IsString()
  @IsNotEmpty()
  root!: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_READ_FILE_MAX_BYTES)
  maxBytes?: number;
}

/**
 * Validates `read_file` options and fills in defaults: `root` becomes an absolute path and
 * `maxBytes` is always set.
 *
 * @throws AgentRxError with code `invalid_options` listing the bad fields.
 */
export function resolveReadFileOptions(options: ReadFileOptions): Required<ReadFileOptions> {
  const config = plainToInstance(ReadFileConfig, { ...options });
  const errors = validateSync(config, { forbidUnknownValues: true });
  if (errors.length > 0) {
    const fields = errors.map((e) => e.property);
    const messages = errors.flatMap((e) => Object.values(e.constraints ?? {}));
    throw new AgentRxError('invalid_options', `invalid read_file options: ${messages.join('; ')}`, { fields });
  }
  return Object.freeze({ root: path.resolve(config.root), maxBytes: config.maxBytes ?? DEFAULT_READ_FILE_MAX_BYTES });
}
