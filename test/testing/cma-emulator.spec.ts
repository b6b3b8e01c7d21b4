import { startCmaEmulator, type CmaEmulator, type CmaEmulatorOptions } from '../../src/testing/cma-emulator.js';

const KEY = 'emu-key';
const BETA = 'managed-agents-2026-04-01';

/** The fields of the emulator's JSON bodies these tests read. */
interface Json {
  readonly id: string;
  readonly data: unknown[];
  readonly next_page: string | null;
}

describe('startCmaEmulator', () => {
  let emu: CmaEmulator;
  afterEach(async () => {
    await emu?.close();
  });

  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    'x-api-key': KEY,
    'anthropic-beta': BETA,
    'content-type': 'application/json',
    ...extra,
  });
  async function call(method: string, path: string, body?: unknown, h: Record<string, string> = headers()): Promise<{ status: number; json: Json }> {
    const res = await fetch(`${emu.baseUrl}${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
  }
  async function session(o: CmaEmulatorOptions = {}): Promise<string> {
    emu = await startCmaEmulator({ apiKey: KEY, ...o });
    const env = await call('POST', '/v1/environments', { name: 'env' });
    const agent = await call('POST', '/v1/agents', { name: 'agent', model: 'claude-sonnet-4-5' });
    const s = await call('POST', '/v1/sessions', { agent: agent.json.id, environment_id: env.json.id });
    expect(s.status).toBe(200);
    return s.json.id as string;
  }

  /** Reads raw SSE text from a stream request until `until(text)` holds, then aborts. */
  async function readStream(path: string, until: (text: string) => boolean, h: Record<string, string> = headers()): Promise<string> {
    const ctrl = new AbortController();
    const res = await fetch(`${emu.baseUrl}${path}`, { headers: h, signal: ctrl.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!until(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    ctrl.abort();
    return text;
  }

  describe('authentication and headers', () => {
    it('should accept x-api-key or Authorization: Bearer, ignore ?beta=true, and reject a missing or wrong key', async () => {
      const id = await session();
      expect((await call('GET', `/v1/sessions/${id}`)).status).toBe(200);
      expect((await call('GET', `/v1/sessions/${id}?beta=true`, undefined, { authorization: `Bearer ${KEY}`, 'anthropic-beta': BETA })).status).toBe(200);
      expect(await call('GET', `/v1/sessions/${id}`, undefined, { 'anthropic-beta': BETA })).toMatchObject({
        status: 401,
        json: { type: 'error', error: { type: 'authentication_error' } },
      });
      expect((await call('GET', `/v1/sessions/${id}`, undefined, headers({ 'x-api-key': 'nope' }))).status).toBe(401);
      expect(emu.requests.map((r) => r.headers['x-api-key'] ?? r.headers['authorization'] ?? '')).not.toContain(KEY);
    });

    it('should require the managed-agents beta header', async () => {
      const id = await session();
      const res = await call('GET', `/v1/sessions/${id}`, undefined, { 'x-api-key': KEY });
      expect(res).toMatchObject({ status: 400, json: { error: { type: 'invalid_request_error', message: expect.stringContaining(BETA) } } });
    });
  });

  describe('POST /v1/sessions/{id}/events', () => {
    it('should answer 400 to an empty events list, exactly like the service', async () => {
      const id = await session();
      expect(await call('POST', `/v1/sessions/${id}/events`, { events: [] })).toEqual({
        status: 400,
        json: { type: 'error', error: { type: 'invalid_request_error', message: 'events: value must contain at least 1 item' } },
      });
      expect(emu.sessions.get(id)!.received).toEqual([]);
    });

    it('should answer 400 to a result for an unknown tool use and to a non-user event', async () => {
      const id = await session();
      const res = await call('POST', `/v1/sessions/${id}/events`, {
        events: [{ type: 'user.custom_tool_result', custom_tool_use_id: 'toolu_nope', content: [] }],
      });
      expect(res).toMatchObject({ status: 400, json: { error: { message: expect.stringContaining('toolu_nope') } } });
      expect((await call('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'agent.message', content: [] }] })).status).toBe(400);
    });

    it('should store accepted events with ids and answer them', async () => {
      const id = await session({ script: [{ text: 'hi' }] });
      const res = await call('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'yo' }] }] });
      expect(res).toMatchObject({
        status: 200,
        json: {
          data: [{ type: 'user.message', id: expect.stringMatching(/^sevt_/), processed_at: expect.any(String), content: [{ type: 'text', text: 'yo' }] }],
        },
      });
      expect(emu.sessions.get(id)!.history.map((e) => e['type'])).toEqual([
        'user.message',
        'session.status_running',
        'span.model_request_start',
        'agent.message',
        'span.model_request_end',
        'session.status_idle',
      ]);
    });
  });

  describe('GET /v1/sessions/{id}/events', () => {
    it('should page with limit and next_page cursors, oldest first', async () => {
      const id = await session({ script: [{ text: 'hi' }] });
      await call('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'yo' }] }] });
      const p1 = await call('GET', `/v1/sessions/${id}/events?limit=4`);
      expect(p1.json.data).toHaveLength(4);
      expect(p1.json.next_page).toBe('page_4');
      const p2 = await call('GET', `/v1/sessions/${id}/events?limit=4&page=${p1.json.next_page}`);
      expect(p2.json).toMatchObject({ next_page: null });
      expect([...p1.json.data, ...p2.json.data]).toEqual(emu.sessions.get(id)!.history);
      expect((await call('GET', `/v1/sessions/${id}/events?page=bogus`)).status).toBe(400);
    });
  });

  describe('GET /v1/sessions/{id}/events/stream', () => {
    it('should send an event: line on every frame, echo user events and heartbeat', async () => {
      const id = await session({ script: [{ text: 'hi' }], heartbeatMs: 10 });
      const reading = readStream(`/v1/sessions/${id}/events/stream`, (t) => t.includes('session.status_idle') && (t.match(/: heartbeat/g) ?? []).length >= 2);
      await emu.waitFor(() => emu.sessions.get(id)!.openStreams === 1);
      await call('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'yo' }] }] });
      const text = await reading;
      const frames = text.split('\n\n').filter((f) => f.includes('data:'));
      expect(frames).toHaveLength(6);
      for (const f of frames) expect(f).toMatch(/^event: [a-z_.]+\ndata: \{/);
      expect(JSON.parse(frames[0]!.split('data: ')[1]!)).toMatchObject({ type: 'user.message', id: expect.any(String) });
    });

    it('should send previews only to streams that asked for event_deltas, never into history', async () => {
      const id = await session({
        script: [
          { text: 'a b c', previews: true },
          { text: 'd e', previews: true },
        ],
        heartbeatMs: 0,
      });
      const withDeltas = readStream(`/v1/sessions/${id}/events/stream?event_deltas=agent.message`, (t) => t.includes('session.status_idle'));
      await emu.waitFor(() => emu.sessions.get(id)!.openStreams === 1);
      await call('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'x' }] }] });
      expect((await withDeltas).match(/event: event_delta/g)).toHaveLength(3);
      await emu.waitFor(() => emu.sessions.get(id)!.openStreams === 0);
      const without = readStream(`/v1/sessions/${id}/events/stream`, (t) => t.includes('session.status_idle'));
      await emu.waitFor(() => emu.sessions.get(id)!.openStreams === 1);
      await call('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'y' }] }] });
      expect(await without).not.toContain('event_delta');
      expect(emu.sessions.get(id)!.history.some((e) => String(e['type']).startsWith('event_'))).toBe(false);
    });

    it('should answer 404 for an unknown session', async () => {
      await session();
      expect((await call('GET', '/v1/sessions/sesn_nope/events/stream')).status).toBe(404);
    });

    it('should start a frame that never ends when the plan asks for an unbounded frame, and write nothing else', async () => {
      const id = await session({ script: [{ text: 'hi' }], heartbeatMs: 5, faults: { unboundedFrame: { before: 1, bytes: 100_000 } } });
      const reading = readStream(`/v1/sessions/${id}/events/stream`, (t) => t.length >= 100_000);
      await emu.waitFor(() => emu.sessions.get(id)!.openStreams === 1);
      await call('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'yo' }] }] });
      const text = await reading;
      const opened = text.indexOf('event: message\ndata: ');
      expect(opened).toBeGreaterThanOrEqual(0);
      const frame = text.slice(opened);
      expect(frame.split('\n')).toHaveLength(2);
      expect(frame.length).toBeGreaterThanOrEqual(100_000);
      expect(frame).not.toContain('heartbeat');
      // The events that frame stood in front of went to history only.
      expect(emu.sessions.get(id)!.history.at(-1)).toMatchObject({ type: 'session.status_idle' });
    });
  });

  describe('resources', () => {
    it('should answer 409 to a taken agent name and 404 to a session for an unknown agent', async () => {
      await session();
      expect((await call('POST', '/v1/agents', { name: 'agent', model: 'm' })).status).toBe(409);
      const env = [...emu.environments.keys()][0]!;
      expect((await call('POST', '/v1/sessions', { agent: 'agent_nope', environment_id: env })).status).toBe(404);
      const list = await call('GET', '/v1/agents?limit=1');
      expect(list.json).toMatchObject({ data: [{ name: 'agent' }], next_page: null });
    });

    it('should answer an archive fault without archiving, then archive on the next request', async () => {
      await session({ faults: { archiveFaults: { environments: { 0: { kind: 'status', status: 503 } } } } });
      const env = [...emu.environments.keys()][0]!;
      expect((await call('POST', `/v1/environments/${env}/archive`, {})).status).toBe(503);
      expect(emu.environments.get(env)!['archived_at']).toBeNull();
      expect((await call('POST', `/v1/environments/${env}/archive`, {})).status).toBe(200);
      expect(emu.environments.get(env)!['archived_at']).not.toBeNull();
    });

    it('should process initial_events at session creation', async () => {
      emu = await startCmaEmulator({ apiKey: KEY, script: [{ text: 'started' }] });
      const env = await call('POST', '/v1/environments', { name: 'env' });
      const agent = await call('POST', '/v1/agents', { name: 'agent', model: 'm' });
      const s = await call('POST', '/v1/sessions', {
        agent: { type: 'agent', id: agent.json.id },
        environment_id: env.json.id,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }],
      });
      expect(emu.sessions.get(s.json.id)!.history.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    });
  });

  describe('the scripted agent', () => {
    it('should re-ask the remainder after a partial answer and start the next turn once all are answered', async () => {
      const id = await session({
        script: [
          {
            toolUses: [
              { id: 'u1', name: 't' },
              { id: 'u2', name: 't' },
            ],
          },
          { text: 'done' },
        ],
      });
      await call('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] });
      await call('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.custom_tool_result', custom_tool_use_id: 'u2', content: [] }] });
      expect(emu.sessions.get(id)!.history.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: ['u1'] } });
      await call('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.custom_tool_result', custom_tool_use_id: 'u1', content: [] }] });
      expect(emu.sessions.get(id)!.history.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    });

    it('should stop thinking on user.interrupt and go idle', async () => {
      const id = await session({ script: [{ text: 'never', thinkMs: 60_000 }] });
      await call('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] });
      expect(emu.sessions.get(id)!.status).toBe('running');
      await call('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.interrupt' }] });
      expect(emu.sessions.get(id)!).toMatchObject({ status: 'idle', interrupts: 1 });
      expect(emu.sessions.get(id)!.history.map((e) => e['type'])).not.toContain('agent.message');
    });

    it('should report an exhausted script as a terminal session.error', async () => {
      const id = await session({ script: [] });
      await call('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] });
      expect(emu.sessions.get(id)!.history.at(-1)).toMatchObject({
        type: 'session.error',
        error: { message: expect.stringContaining('script exhausted'), retry_status: { type: 'terminal' } },
      });
    });
  });
});
