import { plainToInstance } from '../../core/util/class-transformer.js';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  validateSync,
  type ValidationError,
} from '../../core/util/class-validator.js';
import { CoerceBoolean, CoerceNumber, type ConfigSection } from '../../core/config/config-section.js';
import { IsSecret, Secret, SecretField } from '../../core/config/secret.js';
import { AgentRxError } from '../../core/errors.js';

/** Token under which the validated {@link AgUiHttpOptionsClass} instance is bound (`toConstantValue`). */
export const AgUiHttpOptions = Symbol('AgUiHttpOptions');

/** Validated options of the AG-UI HTTP endpoint (config section `agui`). */
export type AgUiHttpOptions = AgUiHttpOptionsClass;

/** An allowed CORS origin: `*`, or `scheme://host[:port]` without a path. */
const ORIGIN = /^(\*|https?:\/\/[^/\s?#]+)$/;

/** An allowed host: `*`, a DNS name, an IPv4 address or a bracketed IPv6 address. */
const HOST_NAME = /^(\*|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])$/;

/** Largest request body the endpoint accepts unless configured otherwise (1 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;

/**
 * Options of the AG-UI HTTP endpoint (`agentrx serve`, {@link createAgUiHandler},
 * {@link startAgUiServer}). Also the top-level `agui` section of an agentrx config file, where
 * `${VAR}` interpolation applies (`"token": "${AGENTRX_TOKEN}"`).
 */
export class AgUiHttpOptionsClass {
  /** TCP port of `startAgUiServer` / `agentrx serve` (0 = an ephemeral port). Not used by the bare handler. */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(65_535)
  port: number = 8787;

  /** Interface `startAgUiServer` listens on. Default loopback only; anything else should set `token`. */
  @IsString()
  @IsNotEmpty()
  host: string = '127.0.0.1';

  /**
   * When set, `POST /agent` requires `Authorization: Bearer <token>` (else 401). Compared in
   * constant time. Never logged, never in an error message or `inspect` output. The page
   * (`GET /`) and `GET /healthz` stay public; the page asks for the token after a 401.
   */
  @IsOptional()
  @SecretField()
  @IsSecret()
  token?: Secret;

  /**
   * Origins allowed to call the endpoint from a browser on another origin (`https://app.example`,
   * or `*` for any). Listed origins get `Access-Control-Allow-Origin` and preflight answers; a
   * request carrying any other cross-origin `Origin` is refused with 403. Same-origin requests
   * (the built-in page) are always allowed. Default: none.
   */
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Matches(ORIGIN, { each: true, message: 'each value in cors must be "*" or an origin such as https://app.example (scheme://host[:port], no path)' })
  cors: string[] = [];

  /**
   * Host names (the `Host` header, port ignored) the endpoint answers, against DNS rebinding: a
   * page on another site that resolves its own name to this address is refused (403
   * `host_not_allowed`). Always allowed: `localhost` (and `*.localhost`), `127.0.0.1`, `[::1]`,
   * and `host` when it names one address (not `0.0.0.0`/`::`). Add the names clients use to
   * reach a server on another interface (`agent.example.com`), or `*` to allow any (then set
   * `token`). `GET /healthz` is not checked (load balancers probe by address).
   */
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Matches(HOST_NAME, {
    each: true,
    message: 'each value in allowedHosts must be "*" or a host name or address without scheme, port or path (agent.example.com, 10.0.0.5, [fd00::1])',
  })
  allowedHosts: string[] = [];

  /**
   * Trust `X-Forwarded-Host` (same-origin check, allowed hosts) and `X-Forwarded-For` (the client
   * address of `maxRunsPerClient`: its last entry) as set by a reverse proxy in front of the
   * endpoint. Off by default: without a proxy that overwrites them, any client can forge them.
   */
  @CoerceBoolean()
  @IsBoolean()
  trustProxy: boolean = false;

  /** A request body that stalls this long (ms) between two chunks is refused with 408 and the connection closed. */
  @CoerceNumber()
  @IsInt()
  @Min(100)
  @Max(600_000)
  bodyIdleTimeoutMs: number = 10_000;

  /** A request body not complete this long (ms) after its headers is refused with 408 and the connection closed. */
  @CoerceNumber()
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  bodyTimeoutMs: number = 30_000;

  /** Request headers a cross-origin page may send, besides `authorization`, `content-type`, `accept` and `last-event-id` (preflight `Access-Control-Allow-Headers`). */
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Matches(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, { each: true, message: 'each value in corsAllowHeaders must be a header name' })
  corsAllowHeaders: string[] = [];

  /** How long (seconds) a browser may cache a preflight answer (`Access-Control-Max-Age`). */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(86_400)
  corsMaxAgeSeconds: number = 600;

  /**
   * Runs streamed at the same time for one client address (the socket's, or with `trustProxy`
   * the proxy's `X-Forwarded-For`); one more gets 429 with `Retry-After`. Keeps one client from
   * taking every run of `maxConcurrentRuns`.
   */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  @Max(10_000)
  maxRunsPerClient: number = 8;

  /** Runs streamed at the same time, over all threads; one more gets 429 with `Retry-After`. */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  @Max(10_000)
  maxConcurrentRuns: number = 16;

  /** Seconds sent in `Retry-After` with a 429. */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  @Max(3_600)
  retryAfterSeconds: number = 1;

  /** Largest accepted request body in bytes; a larger one gets 413. */
  @CoerceNumber()
  @IsInt()
  @Min(1_024)
  @Max(104_857_600)
  maxBodyBytes: number = DEFAULT_MAX_BODY_BYTES;

  /**
   * While an SSE run is open, a comment line (`: keep-alive`) is written after this long (ms)
   * without an event, so proxies and load balancers do not close a stream that waits on a slow
   * tool or model. AG-UI clients ignore comments. 0 turns it off. Not sent on protobuf streams.
   */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  heartbeatMs: number = 15_000;

  /** A thread whose session has had no run for this long (ms) is closed; its next request starts a new session. */
  @CoerceNumber()
  @IsInt()
  @Min(1_000)
  threadIdleMs: number = 1_800_000;

  /**
   * How long (ms) a wait on the client lasts: a frontend tool call waiting for the client's
   * result (the `tool` message of its next run). Past it, the model gets an error result saying
   * the client did not answer, and the session goes on. The run timeout does not count while a
   * call waits. The wait is kept in the session's ledger (`awaiting_client`, in the session
   * store), so the client's answer is taken after the endpoint restarted, or by another endpoint
   * sharing the store: the thread's stored session resumes with it. Default 10 minutes.
   */
  @CoerceNumber()
  @IsInt()
  @Min(1_000)
  @Max(604_800_000)
  clientWaitMs: number = 600_000;

  /**
   * Live threads (sessions) kept at once. A new thread beyond it closes the least recently used
   * idle one; when every thread is running a run, the request gets 429.
   */
  @CoerceNumber()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  maxThreads: number = 1_000;

  /**
   * Idle threads (no run streaming, nothing waiting on the client) whose sessions stay open in
   * memory for their next run. Beyond it the least recently used idle thread's session is closed
   * at once (threads waiting on the client are kept); its next run resumes that session from the
   * session store, found by thread id, so the cost is a read of its log instead of memory held
   * between runs. Raise it when follow-ups come fast and memory is plentiful; 0 closes every
   * session when its run ends.
   */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  maxIdleThreads: number = 100;

  /**
   * How long (ms) a run keeps going after its client disconnected before the session is
   * cancelled, so the client can reconnect (`Last-Event-ID` on `POST /agent`, or
   * `GET /threads/:threadId/events`) and pick up where it left off. A run that reaches its
   * terminal meanwhile is not cancelled. 0 (default): a disconnect cancels the run at once, as a
   * client's abort ("stop") expects.
   */
  @CoerceNumber()
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  reconnectGraceMs: number = 0;

  /** Serve the built-in chat page at `GET /`. */
  @CoerceBoolean()
  @IsBoolean()
  page: boolean = true;

  /**
   * A path prefix stripped from request paths before routing (`/agui` → `POST /agui/agent`), for
   * hosts that hand the handler un-stripped URLs (a Nest controller). Express `app.use(prefix, h)`
   * strips the prefix itself: leave this empty there. Default `''`.
   */
  @IsString()
  @Matches(/^(|\/[^?#\s]*[^/?#\s])$/, { message: 'basePath must be empty or start with "/" and not end with "/"' })
  basePath: string = '';
}

/** The options as a caller writes them: every field optional, `token` as a string or a Secret. */
export type AgUiHttpOptionsInput = {
  readonly [K in keyof AgUiHttpOptionsClass]?: K extends 'token'
    ? string | Secret
    : AgUiHttpOptionsClass[K] extends string[]
      ? readonly string[]
      : AgUiHttpOptionsClass[K];
};

const OPTION_KEYS = Object.keys(new AgUiHttpOptionsClass()).concat('token') as (keyof AgUiHttpOptionsClass)[];

/**
 * Validates endpoint options and fills defaults. Only the option keys of
 * {@link AgUiHttpOptionsClass} are read from `input` (other keys, such as `rx`, are ignored);
 * `undefined` values mean "default". Throws `invalid_config` listing every problem; a token's
 * value never appears in it.
 */
export function resolveAgUiHttpOptions(input: AgUiHttpOptionsInput | AgUiHttpOptions = {}): AgUiHttpOptions {
  const plain: Record<string, unknown> = {};
  for (const key of OPTION_KEYS) {
    const value = (input as Record<string, unknown>)[key];
    if (value !== undefined) plain[key] = Array.isArray(value) ? [...(value as unknown[])] : value;
  }
  const options = plainToInstance(AgUiHttpOptionsClass, plain, { exposeDefaultValues: true });
  const problems = validateSync(options, { forbidUnknownValues: true }).flatMap((e) => describe(e));
  if (problems.length > 0) {
    throw new AgentRxError('invalid_config', `invalid AG-UI endpoint options:\n${problems.map((p) => `- ${p}`).join('\n')}`, { problems });
  }
  return options;
}

/** The `agui` config section (top level): validated when present, defaults otherwise. */
export const aguiHttpConfigSection: ConfigSection<AgUiHttpOptionsClass> = {
  key: 'agui',
  options: AgUiHttpOptionsClass,
  token: AgUiHttpOptions,
  scope: 'root',
};

function describe(e: ValidationError): string[] {
  const own = Object.values(e.constraints ?? {}).map((m) => `${e.property}: ${m}`);
  return [...own, ...(e.children ?? []).flatMap((c) => describe(c).map((d) => `${e.property}.${d}`))];
}
