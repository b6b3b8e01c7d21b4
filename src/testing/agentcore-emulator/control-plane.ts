import { isMap } from './history.js';

/**
 * The harness control plane of the AgentCore emulator (`CreateHarness`, `GetHarness`,
 * `ListHarnesses`, `DeleteHarness`, REST-JSON as `@aws-sdk/client-bedrock-agentcore-control`
 * speaks it). Harness statuses walk a scripted sequence, one step per `GetHarness`.
 */

/** Harness statuses of the control plane. */
export type EmulatedHarnessStatus = 'CREATING' | 'CREATE_FAILED' | 'UPDATING' | 'UPDATE_FAILED' | 'READY' | 'DELETING' | 'DELETE_FAILED' | (string & {});

/** An HTTP error answer (`x-amzn-errortype` + `{message}`), consumed by one control-plane call. */
export interface EmulatorHttpFault {
  /** HTTP status of the error answer. */
  readonly status: number;
  /** Default from the status: 400 ValidationException, 404 ResourceNotFoundException, 409 ConflictException, 429 ThrottlingException, 5xx InternalServerException. */
  readonly errorType?: string;
  /** `message` of the error body. Default: a generic emulated message. */
  readonly message?: string;
}

/** A harness that exists before the test starts. */
export interface SeededHarness {
  /** Harness name (a 409 on a create with the same name). */
  readonly harnessName: string;
  /** Harness id. Default: derived from the name. */
  readonly harnessId?: string;
  /** Statuses answered by successive `GetHarness` calls (the last one sticks). Default `['READY']`. */
  readonly statuses?: readonly EmulatedHarnessStatus[];
  /** After this many `GetHarness` calls the harness is gone (404), e.g. a DELETING one finishing. */
  readonly disappearsAfterGets?: number;
}

/** Control-plane behaviour of the emulator. */
export interface AgentCoreControlOptions {
  /** Harnesses that already exist (409 on a create with the same name). */
  readonly harnesses?: readonly SeededHarness[];
  /**
   * Statuses a created harness answers to successive `GetHarness` calls; the last one sticks.
   * `CreateHarness` itself answers `CREATING`. Default `['CREATING', 'READY']`.
   */
  readonly statusSequence?: readonly EmulatedHarnessStatus[];
  /** `failureReason` reported with a `*_FAILED` status. */
  readonly failureReason?: string;
  /** Largest `ListHarnesses` page (a smaller `maxResults` wins). Default 10. */
  readonly pageSize?: number;
  /** Error answers per operation, consumed in order, one per call. */
  readonly faults?: {
    readonly create?: readonly EmulatorHttpFault[];
    readonly get?: readonly EmulatorHttpFault[];
    readonly list?: readonly EmulatorHttpFault[];
    readonly delete?: readonly EmulatorHttpFault[];
    /** `DeleteHarness` of the harness of this name answers this error, every time (one harness a prune cannot delete). */
    readonly deleteOf?: Readonly<Record<string, EmulatorHttpFault>>;
  };
}

/** A harness as the emulator holds it. */
export interface EmulatedHarness {
  /** Harness id. */
  readonly harnessId: string;
  /** Harness name. */
  readonly harnessName: string;
  /** Harness ARN (`arn:aws:bedrock-agentcore:<region>:<account>:harness/<id>`). */
  readonly arn: string;
  /** RFC 3339 timestamp (the control plane's timestamp format). */
  readonly createdAt: string;
  /** The request body of the `CreateHarness` that made it (undefined for a seeded one). */
  readonly createRequest: Readonly<Record<string, unknown>> | undefined;
  /** Statuses answered by successive `GetHarness` calls (the last one sticks). */
  readonly statuses: readonly EmulatedHarnessStatus[];
  /** `GetHarness` calls answered so far. */
  gets: number;
  /** See `SeededHarness.disappearsAfterGets`. */
  readonly disappearsAfterGets?: number;
  /** The status answered last. */
  status: EmulatedHarnessStatus;
}

/** A control-plane answer: status, JSON body, and the error type header for errors. */
export interface ControlAnswer {
  /** HTTP status. */
  readonly status: number;
  /** JSON body. */
  readonly body: Readonly<Record<string, unknown>>;
  /** `x-amzn-errortype` of an error answer. */
  readonly errorType?: string;
}

const NAME = /^[a-zA-Z][a-zA-Z0-9_]{0,39}$/;

/** The control plane's state and handlers. */
export class EmulatedControlPlane {
  /** Live harnesses in creation order. */
  readonly harnesses: EmulatedHarness[] = [];
  private readonly faults: Record<'create' | 'get' | 'list' | 'delete', EmulatorHttpFault[]>;
  private counter = 0;

  constructor(
    private readonly opts: AgentCoreControlOptions,
    private readonly region: string,
    private readonly accountId: string,
  ) {
    this.faults = {
      create: [...(opts.faults?.create ?? [])],
      get: [...(opts.faults?.get ?? [])],
      list: [...(opts.faults?.list ?? [])],
      delete: [...(opts.faults?.delete ?? [])],
    };
    for (const seed of opts.harnesses ?? []) this.add(seed.harnessName, seed.statuses ?? ['READY'], undefined, seed.harnessId, seed.disappearsAfterGets);
  }

  /** `POST /harnesses`. */
  create(body: unknown): ControlAnswer {
    const fault = this.faults.create.shift();
    if (fault) return faultAnswer(fault);
    if (!isMap(body)) return validation('The request body must be a JSON object.');
    const name = body['harnessName'];
    if (typeof name !== 'string' || !NAME.test(name)) return validation(`harnessName: must match ${NAME.source}`);
    const role = body['executionRoleArn'];
    if (typeof role !== 'string' || !role.startsWith('arn:')) return validation('executionRoleArn: must be an IAM role ARN');
    const tools = body['tools'];
    if (tools !== undefined) {
      if (!Array.isArray(tools)) return validation('tools: must be a list');
      for (let i = 0; i < tools.length; i++) {
        const t = tools[i] as unknown;
        if (!isMap(t) || typeof t['type'] !== 'string') return validation(`tools.${i}.type: is required`);
        if (t['type'] !== 'inline_function') continue;
        const fn = isMap(t['config']) ? t['config']['inlineFunction'] : undefined;
        if (typeof t['name'] !== 'string' || !isMap(fn) || typeof fn['description'] !== 'string' || !isMap(fn['inputSchema'])) {
          return validation(`tools.${i}: an inline_function tool needs name and config.inlineFunction {description, inputSchema}`);
        }
      }
    }
    if (this.harnesses.some((h) => h.harnessName === name)) {
      return { status: 409, errorType: 'ConflictException', body: { message: `A harness named ${name} already exists.` } };
    }
    const h = this.add(name, this.opts.statusSequence ?? ['CREATING', 'READY'], body);
    return { status: 201, body: { harness: this.view(h, 'CREATING') } };
  }

  /** `GET /harnesses/{id}`: answers the next status of the harness's sequence. */
  get(harnessId: string): ControlAnswer {
    const fault = this.faults.get.shift();
    if (fault) return faultAnswer(fault);
    const h = this.harnesses.find((x) => x.harnessId === harnessId);
    if (!h) return notFound(harnessId);
    if (h.disappearsAfterGets !== undefined && h.gets >= h.disappearsAfterGets) {
      this.harnesses.splice(this.harnesses.indexOf(h), 1);
      return notFound(harnessId);
    }
    h.status = h.statuses[Math.min(h.gets, h.statuses.length - 1)] ?? 'READY';
    h.gets++;
    return { status: 200, body: { harness: this.view(h, h.status) } };
  }

  /** `GET /harnesses?maxResults&nextToken`: one page, `nextToken` while more remain. */
  list(query: Readonly<Record<string, string>>): ControlAnswer {
    const fault = this.faults.list.shift();
    if (fault) return faultAnswer(fault);
    const cap = Math.max(1, this.opts.pageSize ?? 10);
    const asked = query['maxResults'] !== undefined ? Number(query['maxResults']) : cap;
    const size = Number.isInteger(asked) && asked > 0 ? Math.min(asked, cap) : cap;
    const start = query['nextToken'] !== undefined ? Number(query['nextToken'].replace(/^page-/, '')) : 0;
    if (!Number.isInteger(start) || start < 0) return validation('nextToken: invalid pagination token');
    const page = this.harnesses.slice(start, start + size).map((h) => ({
      harnessId: h.harnessId,
      harnessName: h.harnessName,
      arn: h.arn,
      status: h.status,
      createdAt: h.createdAt,
      updatedAt: h.createdAt,
    }));
    const next = start + size < this.harnesses.length ? `page-${start + size}` : undefined;
    return { status: 200, body: { harnesses: page, ...(next !== undefined ? { nextToken: next } : {}) } };
  }

  /** `DELETE /harnesses/{id}`: answers DELETING and removes the harness. */
  delete(harnessId: string): ControlAnswer {
    const fault = this.faults.delete.shift();
    if (fault) return faultAnswer(fault);
    const i = this.harnesses.findIndex((x) => x.harnessId === harnessId);
    if (i < 0) return notFound(harnessId);
    const pinned = this.opts.faults?.deleteOf?.[this.harnesses[i]!.harnessName];
    if (pinned) return faultAnswer(pinned);
    const [h] = this.harnesses.splice(i, 1);
    return { status: 200, body: { harness: this.view(h!, 'DELETING') } };
  }

  private add(
    name: string,
    statuses: readonly EmulatedHarnessStatus[],
    body: Readonly<Record<string, unknown>> | undefined,
    id?: string,
    disappearsAfterGets?: number,
  ): EmulatedHarness {
    const harnessId = id ?? `${name.replace(/_/g, '-').slice(0, 30)}-${String(++this.counter).padStart(10, '0')}`;
    const h: EmulatedHarness = {
      harnessId,
      harnessName: name,
      arn: `arn:aws:bedrock-agentcore:${this.region}:${this.accountId}:harness/${harnessId}`,
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, this.counter)).toISOString(),
      createRequest: body,
      statuses: statuses.length > 0 ? statuses : ['READY'],
      gets: 0,
      status: statuses[0] ?? 'READY',
      ...(disappearsAfterGets !== undefined ? { disappearsAfterGets } : {}),
    };
    this.harnesses.push(h);
    return h;
  }

  private view(h: EmulatedHarness, status: EmulatedHarnessStatus): Record<string, unknown> {
    const body = h.createRequest ?? {};
    return {
      harnessId: h.harnessId,
      harnessName: h.harnessName,
      arn: h.arn,
      status,
      executionRoleArn: typeof body['executionRoleArn'] === 'string' ? body['executionRoleArn'] : `arn:aws:iam::${this.accountId}:role/seeded`,
      createdAt: h.createdAt,
      updatedAt: h.createdAt,
      systemPrompt: Array.isArray(body['systemPrompt']) ? body['systemPrompt'] : [],
      tools: Array.isArray(body['tools']) ? body['tools'] : [],
      ...(isMap(body['model']) ? { model: body['model'] } : {}),
      ...(/FAILED$/.test(status) ? { failureReason: this.opts.failureReason ?? 'Emulated failure.' } : {}),
    };
  }
}

/** The default error type for a status. */
export function errorTypeFor(status: number): string {
  if (status === 400) return 'ValidationException';
  if (status === 403) return 'AccessDeniedException';
  if (status === 404) return 'ResourceNotFoundException';
  if (status === 409) return 'ConflictException';
  if (status === 429) return 'ThrottlingException';
  if (status >= 500) return 'InternalServerException';
  return 'ValidationException';
}

function faultAnswer(f: EmulatorHttpFault): ControlAnswer {
  const errorType = f.errorType ?? errorTypeFor(f.status);
  const body: Record<string, unknown> = { message: f.message ?? `Emulated ${errorType} (HTTP ${f.status}).` };
  if (errorType === 'ValidationException') body['reason'] = 'FieldValidationFailed';
  return { status: f.status, errorType, body };
}

function validation(message: string): ControlAnswer {
  return { status: 400, errorType: 'ValidationException', body: { message, reason: 'FieldValidationFailed' } };
}

function notFound(id: string): ControlAnswer {
  return { status: 404, errorType: 'ResourceNotFoundException', body: { message: `Harness ${id} was not found.` } };
}
