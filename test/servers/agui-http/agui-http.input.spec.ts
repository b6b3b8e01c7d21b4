import { MAX_ID_LENGTH, parseRunAgentInput } from '../../../src/servers/agui-http/agui-http.input.js';

const base = { threadId: 't', runId: 'r', tools: [], context: [], state: {}, forwardedProps: {} };

describe('parseRunAgentInput', () => {
  describe('when the input is valid', () => {
    it('should take the text of the last user message', () => {
      const r = parseRunAgentInput({
        ...base,
        messages: [
          { id: 'u1', role: 'user', content: 'first' },
          { id: 'a1', role: 'assistant', content: 'reply', toolCalls: [] },
          { id: 'u2', role: 'user', content: 'second' },
          { id: 's', role: 'system', content: 'late system note' },
        ],
      });
      expect(r).toEqual({
        ok: true,
        request: {
          threadId: 't',
          runId: 'r',
          text: 'second',
          messageId: 'u2',
          history: [
            { role: 'user', content: 'first' },
            { role: 'assistant', content: 'reply' },
          ],
          context: [],
          state: {},
          clientTools: [],
          toolResults: [],
          resume: [],
          messages: expect.any(Array),
          wireVersion: '0.0',
        },
      });
    });

    it("should read tool messages that end the list after an assistant's calls as frontend tool results, with no prompt", () => {
      const r = parseRunAgentInput({
        ...base,
        tools: [{ name: 'ask_user', description: 'Ask.', parameters: { type: 'object', properties: { q: { type: 'string' } } } }],
        messages: [
          { id: 'u1', role: 'user', content: 'start' },
          { id: 'a1', role: 'assistant', content: '', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'ask_user', arguments: '{}' } }] },
          { id: 't1', role: 'tool', toolCallId: 'c1', content: 'yes' },
        ],
        resume: [{ interruptId: 'i1', status: 'resolved', payload: { allow: true } }],
      });
      expect(r).toMatchObject({
        ok: true,
        request: {
          text: '',
          history: [
            { role: 'user', content: 'start' },
            { role: 'assistant', toolCalls: [{ id: 'c1', name: 'ask_user', arguments: '{}' }] },
          ],
          toolResults: [{ toolCallId: 'c1', content: 'yes', messageId: 't1' }],
          clientTools: [{ name: 'ask_user', description: 'Ask.' }],
          resume: [{ interruptId: 'i1', status: 'resolved', payload: { allow: true } }],
        },
      });
    });

    it('should refuse a content part of an unknown type, naming it', () => {
      const r = parseRunAgentInput({
        ...base,
        messages: [
          {
            id: 'u',
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'hologram', data: 'x' },
            ],
          },
        ],
      });
      expect(r).toEqual({
        ok: false,
        problems: ['messages[0].content[1].type: unknown content part "hologram"; one of text, image, audio, video, document, binary'],
      });
    });

    it('should list each bad frontend tool and resume entry', () => {
      const r = parseRunAgentInput({
        ...base,
        messages: [{ id: 'u', role: 'user', content: 'hi' }],
        tools: [{ name: 'has space', parameters: {} }, { name: 'dup' }, { name: 'dup' }, { name: 'p', parameters: 'x' }, { name: 'd', description: 7 }],
        resume: [{ status: 'resolved' }, { interruptId: 'i', status: 'maybe' }],
      });
      expect(r.ok).toBe(false);
      expect(!r.ok && r.problems).toEqual([
        expect.stringMatching(/^tools\[0\]\.name: must be 1–64 letters/),
        "tools[2].name: 'dup' is declared twice",
        'tools[3].parameters: must be a JSON Schema object; got string',
        'tools[4].description: must be a string; got number',
        'resume[0].interruptId: required, a string',
        "resume[1].status: must be 'resolved' or 'cancelled'; got \"maybe\"",
      ]);
    });

    it('should join the text parts of content-part messages and skip other parts', () => {
      const r = parseRunAgentInput({
        ...base,
        messages: [
          {
            id: 'u',
            role: 'user',
            content: [
              { type: 'text', text: 'look at' },
              { type: 'image', source: { type: 'url', value: 'x' } },
              { type: 'text', text: 'this' },
            ],
          },
        ],
      });
      expect(r).toMatchObject({ ok: true, request: { text: 'look at\nthis' } });
    });

    it('should accept a body without tools, context, state and forwardedProps', () => {
      expect(parseRunAgentInput({ threadId: 't', runId: 'r', messages: [{ id: 'u', role: 'user', content: 'hi' }] }).ok).toBe(true);
    });
  });

  describe('when the input is invalid', () => {
    it.each([
      [null, ['body: must be a JSON object (RunAgentInput); got null']],
      ['text', ['body: must be a JSON object (RunAgentInput); got string']],
      [{ ...base, threadId: '', messages: [{ id: 'u', role: 'user', content: 'x' }] }, ['threadId: must not be empty']],
      [
        { ...base, runId: 'r'.repeat(MAX_ID_LENGTH + 1), messages: [{ id: 'u', role: 'user', content: 'x' }] },
        [`runId: must be at most ${MAX_ID_LENGTH} characters; got ${MAX_ID_LENGTH + 1}`],
      ],
      [{ ...base, messages: [] }, ['messages: no user message; the last user message is the prompt']],
      [{ ...base, messages: ['hi'] }, ['messages[0]: must be an object; got string', 'messages: no user message; the last user message is the prompt']],
      [{ ...base, messages: [{ id: 'u', role: 'user', content: [{ type: 'image' }] }] }, ['messages[0].content: the last user message has no text']],
      [
        { ...base, messages: [{ id: 'u', role: 'user', content: [{ text: 'no type' }, { type: 'text' }] }] },
        ['messages[0].content[0].type: required, a string', 'messages[0].content[1].text: required, a string'],
      ],
      [
        { ...base, tools: [{ description: 'x' }], parentRunId: 3, protocolVersion: false, resume: 'yes', messages: [{ id: 'u', role: 'user', content: 'x' }] },
        [
          'resume: must be an array; got string',
          'tools[0].name: required, a string',
          'parentRunId: must be a string; got number',
          'protocolVersion: must be a string; got boolean',
        ],
      ],
    ])('should list every problem of %j', (body, problems) => {
      expect(parseRunAgentInput(body)).toEqual({ ok: false, problems });
    });
  });
});

describe('parseRunAgentInput on a hostile state', () => {
  const user = [{ id: 'u1', role: 'user', content: 'hi' }];
  it('should refuse a state nested 5,000 deep with a problem naming the depth limit', () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 5_000; i++) deep = { d: deep };
    const r = parseRunAgentInput({ ...base, messages: user, state: deep });
    expect(r).toEqual({ ok: false, problems: [expect.stringMatching(/^state: nested more than 64 levels deep/)] });
  });

  it.each(['__proto__', 'constructor'])("should refuse a state with a '%s' key, naming it", (key) => {
    const r = parseRunAgentInput({ ...base, messages: user, state: JSON.parse(`{"${key}":{"x":1}}`) as unknown });
    expect(r).toEqual({ ok: false, problems: [`state: the key '${key}' (at /) is not allowed: AG-UI clients refuse to patch it; rename it`] });
  });
});
