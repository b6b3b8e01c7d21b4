import { inspect } from 'node:util';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { plainToInstance } from 'class-transformer';
import { HttpClientFactoryImpl } from '../../../../src/core/http/http-client-factory.js';
import { MemoryLogger } from '../../../../src/core/logger.js';
import type { AgentSpec } from '../../../../src/core/model.js';
import type { IngestCursor } from '../../../../src/core/plugin/agent-provider.js';
import { CmaProviderOptionsClass } from '../../../../src/plugins/providers/claude-managed-agents/cma.config.js';
import { CmaAgentProvider, newCmaConn, type CmaConn } from '../../../../src/plugins/providers/claude-managed-agents/cma.provider.js';
import { canonicalJson, contentAddressedName, type CmaHandle } from '../../../../src/plugins/providers/claude-managed-agents/cma-provision.js';
import { startCmaEmulator, type CmaEmulator, type CmaEmulatorOptions } from '../../../../src/testing/cma-emulator.js';
import { API_KEY } from './cma-fixtures.js';
import { failure } from '../../../fakes/failure.js';

const spec: AgentSpec = {
  name: 'helper',
  systemPrompt: 'Be brief.',
  tools: [{ name: 'echo', description: 'Echo.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }],
};
const signal = (): AbortSignal => new AbortController().signal;
/** A cursor that has ingested exactly `ids`. */
const cursorOf = (ids: readonly string[]): IngestCursor => ({ ingested: ids.length, has: (id) => ids.includes(id) });

describe('CmaAgentProvider over HTTP', () => {
  let emu: CmaEmulator | undefined;
  let logger: MemoryLogger;
  beforeEach(() => (logger = new MemoryLogger()));
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  function provider(e: CmaEmulator, overrides: Record<string, unknown> = {}): CmaAgentProvider {
    const options = plainToInstance(
      CmaProviderOptionsClass,
      { apiKey: API_KEY, baseUrl: e.baseUrl, retryBaseMs: 1, ...overrides },
      { exposeDefaultValues: true },
    );
    return new CmaAgentProvider(options, new HttpClientFactoryImpl(), logger);
  }

  async function setup(
    o: CmaEmulatorOptions = {},
    overrides: Record<string, unknown> = {},
  ): Promise<{ e: CmaEmulator; p: CmaAgentProvider; handle: CmaHandle; conn: CmaConn }> {
    const e = await startCmaEmulator({ apiKey: API_KEY, ...o });
    emu = e;
    const p = provider(e, overrides);
    const handle = await p.provision(spec, signal());
    const conn = await p.open({ spec, handle, signal: signal() });
    return { e, p, handle, conn };
  }

  describe('.provision', () => {
    it('should create a content-addressed environment and agent with the right headers and body', async () => {
      const { e, handle } = await setup();
      const body = {
        model: 'claude-sonnet-4-5',
        system: 'Be brief.',
        tools: [{ type: 'custom', name: 'echo', description: 'Echo.', input_schema: spec.tools[0]!.inputSchema }],
      };
      expect(handle).toEqual({
        agentId: expect.stringMatching(/^agent_/),
        environmentId: expect.stringMatching(/^env_/),
        agentName: contentAddressedName('helper', body),
        environmentName: contentAddressedName('agentrx', { config: { type: 'cloud', networking: { type: 'unrestricted' } } }),
        agentDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
        environmentDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
        provisioned: { agent: true, environment: true },
      });
      expect(handle.agentName).toBe(`helper_${handle.agentDigest!.slice(0, 8)}`);
      expect(handle.agentName).toMatch(/^helper_[0-9a-f]{8}$/);
      const create = e.requests.find((r) => r.path === '/v1/agents' && r.method === 'POST')!;
      expect(create.body).toEqual({ name: handle.agentName, ...body });
      expect(create.headers).toMatchObject({
        'x-api-key': '[redacted]',
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'managed-agents-2026-04-01',
        'content-type': 'application/json',
      });
      expect(create.headers['authorization']).toBeUndefined();
    });

    it('should recover the existing agent by exact name on 409 (a second process, same spec)', async () => {
      const { e, handle } = await setup();
      const again = await provider(e).provision(spec, signal());
      // Adopted, not created: its teardown must not archive what the first process uses.
      expect(again).toEqual({ ...handle, provisioned: { agent: false, environment: false } });
      expect(e.agents.size).toBe(1);
      expect(e.requests.filter((r) => r.path === '/v1/agents' && r.method === 'POST').map((r) => r.status)).toEqual([200, 409]);
    });

    it('should create a new agent when the spec changes', async () => {
      const { e, handle } = await setup();
      const other = await provider(e).provision({ ...spec, systemPrompt: 'Be verbose.' }, signal());
      expect(other.agentId).not.toBe(handle.agentId);
      expect(other.environmentId).toBe(handle.environmentId);
      expect(e.agents.size).toBe(2);
    });

    it('should replay a create whose outcome was ambiguous and recover the agent it made', async () => {
      emu = await startCmaEmulator({ faults: { createFaults: { agents: { 0: { kind: 'drop_after_accept' } } } } });
      const handle = await provider(emu).provision(spec, signal());
      expect(emu.agents.size).toBe(1);
      expect(handle.agentId).toBe([...emu.agents.keys()][0]);
    });

    it('should use configured ids without creating anything', async () => {
      emu = await startCmaEmulator();
      const handle = await provider(emu, { agentId: 'agent_x', environmentId: 'env_y' }).provision(spec, signal());
      expect(handle).toEqual({ agentId: 'agent_x', environmentId: 'env_y', provisioned: { agent: false, environment: false } });
      expect(emu.requests).toHaveLength(0);
    });

    it('should name resources from canonical JSON (key order does not matter)', () => {
      expect(canonicalJson({ b: 1, a: [{ d: 2, c: undefined }, null] })).toBe('{"a":[{"d":2},null],"b":1}');
      expect(contentAddressedName('x', { a: 1, b: 2 })).toBe(contentAddressedName('x', { b: 2, a: 1 }));
    });
  });

  describe('.teardown', () => {
    it('should archive what it provisioned', async () => {
      const { e, p, handle } = await setup();
      await p.teardown(handle, signal());
      expect(e.agents.get(handle.agentId)!['archived_at']).not.toBeNull();
      expect(e.environments.get(handle.environmentId)!['archived_at']).not.toBeNull();
    });
  });

  describe('.open', () => {
    it('should create a session for the handle', async () => {
      const { e, conn, handle } = await setup();
      expect(conn).toMatchObject({ sessionId: expect.stringMatching(/^sesn_/), resumed: false });
      expect(e.requests.find((r) => r.path === '/v1/sessions')!.body).toEqual({ agent: handle.agentId, environment_id: handle.environmentId });
    });

    it('should fail a resume of an unknown session with http_error 404', async () => {
      emu = await startCmaEmulator();
      const err = await failure(provider(emu).open({ spec, sessionId: 'sesn_nope', signal: signal() }));
      expect(err).toMatchObject({ code: 'http_error', details: { status: 404 } });
    });

    it('should retry a session create answered 429 but not one answered 500', async () => {
      emu = await startCmaEmulator({ faults: { createFaults: { sessions: { 0: { kind: 'status', status: 429 } } } } });
      const p = provider(emu);
      const handle = await p.provision(spec, signal());
      await p.open({ spec, handle, signal: signal() });
      expect(emu.requests.filter((r) => r.path === '/v1/sessions').map((r) => r.status)).toEqual([429, 200]);
      const emu2 = await startCmaEmulator({ faults: { createFaults: { sessions: { 0: { kind: 'status', status: 500 } } } } });
      try {
        const p2 = provider(emu2);
        const err = await failure(p2.open({ spec, signal: signal() }));
        expect(err).toMatchObject({ code: 'http_error', details: { status: 500 } });
        expect(emu2.requests.filter((r) => r.path === '/v1/sessions')).toHaveLength(1);
      } finally {
        await emu2.close();
      }
    });
  });

  describe('.reconnect', () => {
    it('should walk every page and return what was missed and what is unanswered', async () => {
      const { e, p } = await setup({}, { listPageSize: 2 });
      const id = e.seedSession([
        { type: 'user.message', content: [{ type: 'text', text: 'x' }] },
        { type: 'agent.custom_tool_use', id: 'toolu_1', name: 'echo', input: { text: 'a' } },
        { type: 'agent.custom_tool_use', id: 'toolu_2', name: 'echo', input: { text: 'b' } },
        { type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: ['toolu_1', 'toolu_2'] } },
        { type: 'user.custom_tool_result', custom_tool_use_id: 'toolu_1', content: [] },
      ]);
      const conn: CmaConn = newCmaConn(id, false);
      const history = e.sessions.get(id)!.history;
      const rec = await p.reconnect(conn, cursorOf([history[0]!['id'] as string, 'toolu_1']), signal());
      expect(rec.missed.map((m) => m['id'])).toEqual(history.slice(2).map((h) => h['id']));
      expect(rec.pending.map((u) => u.id)).toEqual(['toolu_2']);
      expect(e.requests.filter((r) => r.path === `/v1/sessions/${id}/events`).map((r) => r.query['page'] ?? null)).toEqual([null, 'page_2', 'page_4']);
    });

    it('should report midTurn only when the last status event says the session is running', async () => {
      const { e, p } = await setup({});
      const conn = (id: string): CmaConn => ({ ...newCmaConn(id, true), gated: false });
      const running = e.seedSession([{ type: 'user.message', content: [] }, { type: 'session.status_running' }, { type: 'agent.message', content: [] }]);
      const idle = e.seedSession([
        { type: 'session.status_running' },
        { type: 'session.status_idle', stop_reason: { type: 'end_turn' } },
        { type: 'span.model_request_end' },
      ]);
      expect((await p.reconnect(conn(running), cursorOf([]), signal())).midTurn).toBe(true);
      expect((await p.reconnect(conn(idle), cursorOf([]), signal())).midTurn).toBe(false);
    });

    it('should end a walk that repeats a cursor with provider_error instead of looping', async () => {
      const { e, p } = await setup({ faults: { repeatCursor: true } }, { listPageSize: 1 });
      const id = e.seedSession([{ type: 'session.status_running' }, { type: 'session.status_running' }, { type: 'session.status_running' }]);
      const conn: CmaConn = newCmaConn(id, false);
      const err = await failure(p.reconnect(conn, cursorOf([]), signal()));
      expect(err).toMatchObject({ code: 'provider_error', message: expect.stringContaining('a second time') });
      expect(e.requests.filter((r) => r.path === `/v1/sessions/${id}/events`).map((r) => r.query['page'] ?? null)).toEqual([null, 'page_1']);
    });

    it('should retry a list page answered 503 and not one answered 400', async () => {
      const { e, p, conn } = await setup({ faults: { listFaults: { 0: { kind: 'status', status: 503 }, 2: { kind: 'status', status: 400 } } } });
      await p.reconnect(conn, cursorOf([]), signal());
      expect(e.requests.filter((r) => r.path.endsWith('/events') && r.method === 'GET').map((r) => r.status)).toEqual([503, 200]);
      expect(await failure(p.reconnect(conn, cursorOf([]), signal()))).toMatchObject({ code: 'http_error', details: { status: 400 } });
    });
  });

  describe('.stream', () => {
    it('should fail before open with http_error when the session does not exist', async () => {
      const { p, conn } = await setup();
      const err = await failure(firstValueFrom(p.stream({ ...conn, sessionId: 'sesn_missing' })));
      expect(err).toMatchObject({ code: 'http_error', details: { status: 404 } });
    });

    it('should emit open, then the events pushInput causes', async () => {
      const { e, p, conn } = await setup({ script: [{ text: 'hi' }] });
      const items: unknown[] = [];
      let idle!: () => void;
      const idleSeen = new Promise<void>((r) => (idle = r));
      const sub = p.stream(conn).subscribe((i) => {
        items.push(i);
        if (i.kind === 'event' && i.event['type'] === 'session.status_idle') idle();
      });
      await e.waitFor(() => e.sessions.get(conn.sessionId)!.openStreams === 1);
      await p.pushInput(conn, p.userInput('hello'), signal());
      await idleSeen;
      sub.unsubscribe();
      expect(items[0]).toEqual({ kind: 'open' });
      expect(items.slice(1).map((i) => (i as { event: { type: string } }).event.type)).toEqual([
        'user.message',
        'session.status_running',
        'span.model_request_start',
        'agent.message',
        'span.model_request_end',
        'session.status_idle',
      ]);
    });
  });

  describe('.pushInput', () => {
    it('should refuse an empty events list before sending anything', async () => {
      const { e, p, conn } = await setup();
      const before = e.requests.length;
      expect(await failure(p.pushInput(conn, p.resumeInput([], []), signal()))).toMatchObject({ code: 'provider_error' });
      expect(e.requests).toHaveLength(before);
    });

    it('should send tool results in call order whatever the results order', async () => {
      const { e, p, conn } = await setup({
        script: [
          {
            toolUses: [
              { id: 'u1', name: 'echo' },
              { id: 'u2', name: 'echo' },
            ],
          },
        ],
      });
      await p.pushInput(conn, p.userInput('go'), signal());
      const uses = [
        { id: 'u1', name: 'echo', input: {} },
        { id: 'u2', name: 'echo', input: {} },
      ];
      await p.pushInput(
        conn,
        p.resumeInput(uses, [
          { toolUseId: 'u2', content: 'two', isError: true },
          { toolUseId: 'u1', content: 'one', isError: false },
        ]),
        signal(),
      );
      expect(
        e.sessions
          .get(conn.sessionId)!
          .received.filter((r) => r['type'] === 'user.custom_tool_result')
          .map((r) => [r['custom_tool_use_id'], r['is_error']]),
      ).toEqual([
        ['u1', false],
        ['u2', true],
      ]);
    });
  });

  describe('.interrupt', () => {
    it('should send user.interrupt and close the conn streams', async () => {
      const { e, p, conn } = await setup();
      p.stream(conn).subscribe({ error: () => undefined });
      await e.waitFor(() => e.sessions.get(conn.sessionId)!.openStreams === 1);
      await p.interrupt(conn, signal());
      await e.waitFor(() => e.sessions.get(conn.sessionId)!.openStreams === 0);
      expect(e.sessions.get(conn.sessionId)!.received.map((r) => r['type'])).toEqual(['user.interrupt']);
    });
  });

  describe('secrets', () => {
    it('should keep the API key out of errors, logs and inspect output', async () => {
      emu = await startCmaEmulator({ apiKey: 'a-different-key' });
      const p = provider(emu, { maxRetries: 1 });
      const err = await failure(p.provision(spec, signal()));
      expect(err).toMatchObject({ code: 'http_error', details: { status: 401 } });
      const transport = await failure(provider(emu, { baseUrl: 'http://127.0.0.1:9', maxRetries: 1 }).provision(spec, signal()));
      expect(transport.code).toBe('http_error');
      for (const shown of [
        err.message,
        JSON.stringify(err.details),
        inspect(err, { depth: 10, showHidden: true }),
        inspect(transport, { depth: 10, showHidden: true }),
        JSON.stringify(logger.lines),
        inspect(p, { depth: 10, showHidden: true }),
        JSON.stringify(emu.requests),
      ]) {
        expect(shown).not.toContain(API_KEY);
      }
      expect(logger.lines.length).toBeGreaterThan(0);
    });
  });

  describe('when unconfigured', () => {
    it('should load but reject every call with invalid_config naming the apiKey setting', async () => {
      const p = new CmaAgentProvider(undefined, new HttpClientFactoryImpl(), logger);
      expect(p.id).toBe('claude-managed-agents');
      for (const call of [p.provision(spec, signal()), p.open({ spec, signal: signal() })]) {
        expect(await failure(call)).toMatchObject({ code: 'invalid_config', message: expect.stringContaining("providers['claude-managed-agents'].apiKey") });
      }
      const items = await lastValueFrom(p.stream(newCmaConn('s', false)).pipe(toArray())).catch((e: unknown) => e);
      expect(items).toMatchObject({ code: 'invalid_config' });
    });
  });
});
