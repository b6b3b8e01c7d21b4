import { plainToInstance, Transform } from '../../core/util/class-transformer.js';
import {
  ArrayMaxSize,
  IsArray,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
  buildMessage,
  type ValidationArguments,
} from '../../core/util/class-validator.js';
import { CoerceNumber, type ConfigSection } from '../../core/config/config-section.js';
import { Secret } from '../../core/config/secret.js';

/** Token under which the validated {@link McpOptions} instance is bound (`toConstantValue`). */
export const McpOptionsToken = Symbol('McpOptions');

/** A server name: letters, digits and `-` (no `_`, so `<server>__<tool>` splits one way), 1–32 characters. */
export const MCP_SERVER_NAME = /^[A-Za-z0-9-]{1,32}$/;

/**
 * Default bound of a server's start-up (spawn or connect, `initialize`, first `tools/list`), in ms:
 * long enough for a first `npx -y …` / `uvx …` run, which downloads the package before the server
 * answers.
 */
export const DEFAULT_MCP_START_TIMEOUT_MS = 60_000;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map) && !(v instanceof Secret);

/** class-transformer: every value of a plain object becomes a `Secret` (env values, header values). */
function SecretValues(): PropertyDecorator {
  return Transform(({ value }) => {
    if (typeof value === 'string') return new Secret(value);
    if (!isPlainObject(value)) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === 'string' ? new Secret(v) : v]));
  });
}

/** class-validator: an object whose values are all Secrets (strings before the transform). */
function IsSecretRecord(what: string): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isSecretRecord',
      validator: {
        validate: (value: unknown) => isPlainObject(value) && Object.values(value).every((v) => v instanceof Secret),
        defaultMessage: buildMessage((prefix) => `${prefix}$property must be an object whose values are strings`),
      },
    },
    { context: { expected: `an object of ${what} (name → string value; the values are secrets)` } },
  );
}

/** class-validator: the property may only be given together with `other` absent (stdio vs HTTP). */
function OnlyWithout(other: 'url' | 'command', kind: string): PropertyDecorator {
  return ValidateBy(
    {
      name: 'onlyWithout',
      validator: {
        validate: (_value: unknown, args?: ValidationArguments) => (args?.object as Record<string, unknown>)[other] === undefined,
        defaultMessage: buildMessage((prefix) => `${prefix}$property is only for ${kind} servers, and this one has ${other}`),
      },
    },
    { context: { expected: `no ${other} when this is set (${kind} server)` } },
  );
}

/** class-validator: `requireApproval` is `true`/`false` or an array of tool names. */
function IsApproval(): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isApproval',
      validator: {
        validate: (v: unknown) => typeof v === 'boolean' || (Array.isArray(v) && v.length <= 1000 && v.every((x) => typeof x === 'string' && x.length > 0)),
        defaultMessage: buildMessage((prefix) => `${prefix}$property must be true, false or an array of tool names`),
      },
    },
    { context: { expected: "true (every tool), false, or an array of the server's tool names" } },
  );
}

/**
 * One MCP server: stdio (`command`, with optional `args`, `env`, `cwd`: a child process agentrx
 * starts and stops) or Streamable HTTP (`url`, with optional `headers`). Exactly one of `command`
 * and `url`.
 */
export class McpServerOptions {
  /** The server's name: its key in `servers` (set from the key; not written in the config). */
  @Matches(MCP_SERVER_NAME, {
    message: 'server names must match /^[A-Za-z0-9-]{1,32}$/ (letters, digits and "-"; no "_", since tools are named <server>__<tool>)',
  })
  name!: string;

  /** Executable of a stdio server (`npx`, `node`, `/usr/local/bin/mcp-server-git`). Not run through a shell. */
  @ValidateIf((o: McpServerOptions) => o.url === undefined)
  @IsString()
  @IsNotEmpty()
  command?: string;

  /** Arguments of `command`. */
  @IsOptional()
  @OnlyWithout('url', 'stdio')
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  args?: string[];

  /**
   * Extra environment variables of the child, on top of a minimal inherited set (HOME, PATH,
   * SHELL, TERM, USER, LOGNAME): the parent's environment is not passed on. Values are secrets:
   * never logged nor shown in errors.
   */
  @IsOptional()
  @OnlyWithout('url', 'stdio')
  @SecretValues()
  @IsSecretRecord('environment variables')
  env?: Record<string, Secret>;

  /** Working directory of the child (default: this process's). */
  @IsOptional()
  @OnlyWithout('url', 'stdio')
  @IsString()
  @IsNotEmpty()
  cwd?: string;

  /** Endpoint of a Streamable HTTP server (`http://127.0.0.1:3001/mcp`). */
  @IsOptional()
  @OnlyWithout('command', 'Streamable HTTP')
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false, require_valid_protocol: true })
  url?: string;

  /** Headers sent with every HTTP request (`Authorization`…). Values are secrets. */
  @IsOptional()
  @OnlyWithout('command', 'Streamable HTTP')
  @SecretValues()
  @IsSecretRecord('HTTP headers')
  headers?: Record<string, Secret>;

  /** When set, only these tools of the server are offered (names as the server lists them). */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  allow?: string[];

  /** Tools of the server never offered (applied after `allow`). */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  deny?: string[];

  /**
   * `true`: every call of this server's tools must be allowed by the caller first (the session's
   * `confirmTool`, or `agentrx run --confirm`); an array: only the tools named (server names).
   */
  @IsOptional()
  @IsApproval()
  requireApproval?: boolean | string[];

  /**
   * Bound of start-up (spawn/connect, `initialize`, first `tools/list`, all together) in ms
   * (default 60 s: a first `npx` run downloads the package); past it start-up fails naming the
   * server, this option and the tail of its stderr. The MCP source declares its own start budget
   * from it, so `timeouts.toolsPhaseMs` does not cut it short.
   */
  @CoerceNumber()
  @IsInt()
  @Min(100)
  @Max(600_000)
  startTimeoutMs: number = DEFAULT_MCP_START_TIMEOUT_MS;

  /** Timeout of each call of this server's tools in ms (default `limits.toolTimeoutMs`). */
  @IsOptional()
  @CoerceNumber()
  @IsInt()
  @Min(1)
  @Max(86_400_000)
  timeoutMs?: number;

  /** Longest result text the model is given (characters); a longer one is cut with a note. */
  @CoerceNumber()
  @IsInt()
  @Min(1_000)
  @Max(10_000_000)
  maxResultChars: number = 100_000;

  /** Restarts after a crash before the server is given up (its tools then removed). */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(1000)
  maxRestarts: number = 5;

  /** Base of the restart backoff (`backoffDelay`) in ms. */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(600_000)
  restartBaseMs: number = 500;
}

/**
 * Options of the MCP tool source (top-level config section `mcp`):
 *
 * ```json
 * { "mcp": { "servers": {
 *   "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"] },
 *   "tracker": { "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer ${TRACKER_TOKEN}" }, "deny": ["delete_issue"] }
 * } } }
 * ```
 */
export class McpOptions {
  /** The servers by name; each server's tools are offered as `<name>__<tool>`. */
  // The raw value (not class-transformer's copy): a Map of instances, which ValidateNested walks.
  @Transform(({ obj, key, value }) => {
    const raw: unknown = isPlainObject(obj) && key in obj ? obj[key] : value;
    if (!isPlainObject(raw)) return raw;
    return new Map(
      Object.entries(raw).map(([k, v]) => [
        k,
        isPlainObject(v) ? Object.assign(plainToInstance(McpServerOptions, v, { exposeDefaultValues: true }), { name: k }) : v,
      ]),
    );
  })
  @ValidateBy(
    {
      name: 'isServersObject',
      validator: { validate: (v: unknown) => v instanceof Map, defaultMessage: () => 'servers must be an object of server name → server options' },
    },
    { context: { expected: 'an object of server name → { command, args, env, cwd } or { url, headers }' } },
  )
  @ValidateNested({ each: true })
  servers: Map<string, McpServerOptions> = new Map();
}

/** The top-level `mcp` section; validated only when present. */
export const mcpConfigSection: ConfigSection<McpOptions> = {
  key: 'mcp',
  options: McpOptions,
  token: McpOptionsToken,
  scope: 'root',
};
