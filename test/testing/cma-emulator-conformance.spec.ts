import Anthropic from '@anthropic-ai/sdk';
import { startCmaEmulator, type CmaEmulator } from '../../src/testing/cma-emulator.js';

const KEY = 'sk-ant-conformance-key';

describe('startCmaEmulator conformance with @anthropic-ai/sdk', () => {
  let emu: CmaEmulator;
  let client: Anthropic;
  beforeEach(async () => {
    emu = await startCmaEmulator({
      apiKey: KEY,
      script: [{ text: 'Checking.', toolUses: [{ id: 'toolu_sdk', name: 'echo', input: { text: 'hi' } }] }, { text: 'All done.' }],
    });
    // SDK 1.10 keeps `beta: 'true'` as internal request metadata; the docs' examples (and other SDK
    // versions) put `?beta=true` on the URL, so this client sends it on every request.
    client = new Anthropic({ apiKey: KEY, baseURL: emu.baseUrl, maxRetries: 0, defaultQuery: { beta: 'true' } });
  });
  afterEach(async () => {
    await emu.close();
  });

  it('should serve client.beta sessions create, events.send, events.stream and events.list across pages', async () => {
    const environment = await client.beta.environments.create({ name: 'conformance', config: { type: 'cloud', networking: { type: 'unrestricted' } } });
    const agent = await client.beta.agents.create({
      name: 'conformance',
      model: 'claude-sonnet-4-5',
      tools: [{ type: 'custom', name: 'echo', description: 'Echo.', input_schema: { type: 'object', properties: { text: { type: 'string' } } } }],
    });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    expect(session).toMatchObject({ id: expect.stringMatching(/^sesn_/), type: 'session', status: 'idle', environment_id: environment.id });
    expect((await client.beta.sessions.retrieve(session.id)).id).toBe(session.id);

    const stream = await client.beta.sessions.events.stream(session.id);
    const sent = await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Hello' }] }] });
    expect(sent.data).toEqual([expect.objectContaining({ type: 'user.message', id: expect.any(String) })]);

    const seen: { type: string; id?: string }[] = [];
    let idles = 0;
    for await (const ev of stream) {
      seen.push(ev as { type: string; id?: string });
      if (ev.type === 'agent.custom_tool_use') {
        await client.beta.sessions.events.send(session.id, {
          events: [{ type: 'user.custom_tool_result', custom_tool_use_id: ev.id, content: [{ type: 'text', text: 'HI' }], is_error: false }],
        });
      }
      if (ev.type === 'session.status_idle' && ++idles === 2) break;
    }
    expect(seen.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'agent.custom_tool_use',
      'span.model_request_end',
      'session.status_idle',
      'user.custom_tool_result',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);

    const listed: { id: string }[] = [];
    for await (const ev of client.beta.sessions.events.list(session.id, { limit: 3 })) listed.push(ev as { id: string });
    expect(listed.map((e) => e.id)).toEqual(seen.map((e) => e.id));
    const pages = emu.requests.filter((r) => r.method === 'GET' && r.path === `/v1/sessions/${session.id}/events`);
    expect(pages.map((r) => r.query['page'] ?? null)).toEqual([null, 'page_3', 'page_6', 'page_9', 'page_12']);

    // Every request carried ?beta=true, and the SDK sends the key as a bearer token.
    expect(emu.requests.every((r) => r.query['beta'] === 'true')).toBe(true);
    expect(pages[0]!.headers).toMatchObject({ authorization: 'Bearer [redacted]', 'anthropic-beta': expect.stringContaining('managed-agents-2026-04-01') });

    await client.beta.sessions.delete(session.id);
    expect(emu.sessions.has(session.id)).toBe(false);
  });

  it('should surface the emulator validation errors as SDK errors', async () => {
    client = new Anthropic({ apiKey: KEY, baseURL: emu.baseUrl, maxRetries: 0 });
    const environment = await client.beta.environments.create({ name: 'e' });
    const agent = await client.beta.agents.create({ name: 'a', model: 'claude-sonnet-4-5' });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    await expect(client.beta.sessions.events.send(session.id, { events: [] })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('events: value must contain at least 1 item'),
    });
    await expect(
      client.beta.sessions.events.send(session.id, { events: [{ type: 'user.custom_tool_result', custom_tool_use_id: 'sevt_unknown' }] }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(client.beta.agents.create({ name: 'a', model: 'claude-sonnet-4-5' })).rejects.toMatchObject({ status: 409 });
    const wrong = new Anthropic({ apiKey: 'wrong', baseURL: emu.baseUrl, maxRetries: 0 });
    await expect(wrong.beta.sessions.retrieve(session.id)).rejects.toMatchObject({ status: 401 });
    expect(emu.requests.some((r) => 'beta' in r.query)).toBe(false);
  });

  it("should ask for a confirmation of an always_ask tool and accept the SDK's user.tool_confirmation", async () => {
    await emu.close();
    emu = await startCmaEmulator({
      apiKey: KEY,
      script: [{ serverToolUses: [{ id: 'sevt_ws', name: 'web_search', input: { query: 'x' }, ask: true, result: 'found' }] }, { text: 'Done.' }],
    });
    client = new Anthropic({ apiKey: KEY, baseURL: emu.baseUrl, maxRetries: 0, defaultQuery: { beta: 'true' } });
    const environment = await client.beta.environments.create({ name: 'e' });
    const agent = await client.beta.agents.create({ name: 'a', model: 'claude-sonnet-4-5' });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    const stream = await client.beta.sessions.events.stream(session.id);
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Search' }] }] });

    const seen: string[] = [];
    for await (const ev of stream) {
      seen.push(ev.type);
      if (ev.type === 'agent.tool_use') expect(ev).toMatchObject({ id: 'sevt_ws', name: 'web_search', evaluated_permission: 'ask' });
      if (ev.type === 'session.status_idle' && ev.stop_reason.type === 'requires_action') {
        expect(ev.stop_reason.event_ids).toEqual(['sevt_ws']);
        await client.beta.sessions.events.send(session.id, {
          events: [{ type: 'user.tool_confirmation', tool_use_id: 'sevt_ws', result: 'deny', deny_message: 'not now' }],
        });
      } else if (ev.type === 'session.status_idle') break;
    }
    expect(seen).toEqual(expect.arrayContaining(['agent.tool_use', 'user.tool_confirmation', 'agent.tool_result', 'agent.message']));
    await expect(
      client.beta.sessions.events.send(session.id, {
        events: [{ type: 'user.tool_confirmation', tool_use_id: 'sevt_ws', result: 'allow', deny_message: 'only with deny' }],
      }),
    ).rejects.toMatchObject({ status: 400 });
  });
});
