import {
  CmaTextDeltas,
  awaitingConfirmation,
  blockedOnConfirmation,
  isCmaTurnBoundary,
  messageText,
  normalizeCmaTurn,
  pendingCmaToolUses,
  usageOf,
} from '../../../../src/plugins/providers/claude-managed-agents/cma-normalize.js';

const use = (id: string, name = 'echo', input: unknown = { text: id }) => ({ type: 'agent.custom_tool_use', id, name, input });
const idle = (stop_reason: unknown, id = 'idle') => ({ type: 'session.status_idle', id, stop_reason });
const result = (useId: string, id = `r-${useId}`) => ({ type: 'user.custom_tool_result', id, custom_tool_use_id: useId });
const msg = (id: string, ...texts: string[]) => ({ type: 'agent.message', id, content: texts.map((text) => ({ type: 'text', text })) });

describe('isCmaTurnBoundary', () => {
  it('should close a turn on idle, terminated, deleted and a non-retrying session.error only', () => {
    expect(isCmaTurnBoundary({ type: 'session.status_idle' })).toBe(true);
    expect(isCmaTurnBoundary({ type: 'session.status_terminated' })).toBe(true);
    expect(isCmaTurnBoundary({ type: 'session.deleted' })).toBe(true);
    expect(isCmaTurnBoundary({ type: 'session.error', error: { retry_status: { type: 'terminal' } } })).toBe(true);
    expect(isCmaTurnBoundary({ type: 'session.error', error: { retry_status: { type: 'exhausted' } } })).toBe(true);
    expect(isCmaTurnBoundary({ type: 'session.error' })).toBe(true);
    expect(isCmaTurnBoundary({ type: 'session.error', error: { retry_status: { type: 'retrying' } } })).toBe(false);
    for (const type of ['session.status_running', 'agent.message', 'span.outcome_evaluation_end', 'session.thread_status_idle', 'x'])
      expect(isCmaTurnBoundary({ type })).toBe(false);
    expect(isCmaTurnBoundary({})).toBe(false);
  });
});

describe('normalizeCmaTurn', () => {
  describe('when the last status is a requires_action idle', () => {
    it('should take the custom tool uses named by event_ids, in that order, from this batch only', () => {
      const events = [msg('m', 'hi'), use('a'), use('b'), use('c'), idle({ type: 'requires_action', event_ids: ['c', 'zz', 'a', 'c'] })];
      const turn = normalizeCmaTurn(events);
      expect(turn.terminal).toBe('requires_action');
      expect(turn.customToolUses.map((u) => u.id)).toEqual(['c', 'a']);
      expect(turn.requestedToolUseIds).toEqual(['c', 'zz', 'a', 'c']);
      expect(turn.stopReason).toEqual({ type: 'requires_action', event_ids: ['c', 'zz', 'a', 'c'] });
      expect(turn.events).toEqual(events);
    });

    it('should return no uses (and the requested ids) when they live in an earlier batch', () => {
      const turn = normalizeCmaTurn([result('x'), idle({ type: 'requires_action', event_ids: ['y'] })]);
      expect(turn).toMatchObject({ terminal: 'requires_action', customToolUses: [], requestedToolUseIds: ['y'] });
    });

    it('should flag a non-object input and default a missing one to {}', () => {
      const turn = normalizeCmaTurn([
        use('a', 'echo', 'oops'),
        { type: 'agent.custom_tool_use', id: 'b', name: 'n' },
        idle({ type: 'requires_action', event_ids: ['a', 'b'] }),
      ]);
      expect(turn.customToolUses).toEqual([
        { id: 'a', name: 'echo', input: {}, inputError: expect.stringContaining('string') },
        { id: 'b', name: 'n', input: {} },
      ]);
    });
  });

  describe('when the turn ends otherwise', () => {
    it.each([
      [{ type: 'end_turn' }, 'end_turn'],
      [{ type: 'satisfied' }, 'end_turn'],
      [{ type: 'max_iterations_reached' }, 'end_turn'],
      [{ type: 'retries_exhausted' }, 'terminated'],
      [{ type: 'failed' }, 'terminated'],
      [{ type: 'refusal' }, 'terminated'],
      [{ type: 'something_new' }, 'terminated'],
      [null, 'terminated'],
      [undefined, 'terminated'],
      [{}, 'terminated'],
    ])('should map idle stop_reason %j to %s and keep the raw stop reason', (stop, terminal) => {
      const turn = normalizeCmaTurn([idle(stop)]);
      expect(turn.terminal).toBe(terminal);
      expect(turn.stopReason).toEqual(stop);
    });

    it('should key on the most recent status event', () => {
      expect(normalizeCmaTurn([idle({ type: 'requires_action', event_ids: [] }), idle({ type: 'end_turn' }, 'i2')]).terminal).toBe('end_turn');
      expect(normalizeCmaTurn([idle({ type: 'end_turn' }), { type: 'session.status_terminated', id: 't' }])).toMatchObject({
        terminal: 'terminated',
        stopReason: 'session.status_terminated',
      });
      const err = { type: 'unknown_error', message: 'x', retry_status: { type: 'terminal' } };
      expect(normalizeCmaTurn([idle({ type: 'end_turn' }), { type: 'session.error', id: 'e', error: err }])).toMatchObject({
        terminal: 'terminated',
        stopReason: err,
      });
      expect(normalizeCmaTurn([msg('m', 'no status')])).toMatchObject({ terminal: 'terminated', stopReason: undefined, text: 'no status' });
    });

    it('should terminate an end_turn after a failed outcome verdict (result, or verdict in older material)', () => {
      const failed = { type: 'span.outcome_evaluation_end', id: 'o', result: 'failed' };
      expect(normalizeCmaTurn([failed, idle({ type: 'end_turn' })]).terminal).toBe('terminated');
      expect(normalizeCmaTurn([{ type: 'span.outcome_evaluation_end', id: 'o', verdict: 'failed' }, idle({ type: 'end_turn' })]).terminal).toBe('terminated');
      expect(normalizeCmaTurn([failed, { type: 'span.outcome_evaluation_end', id: 'o2', result: 'satisfied' }, idle({ type: 'end_turn' })]).terminal).toBe(
        'end_turn',
      );
      expect(normalizeCmaTurn([{ type: 'span.outcome_evaluation_end', id: 'o', result: 'needs_revision' }, idle({ type: 'end_turn' })]).terminal).toBe(
        'end_turn',
      );
    });
  });

  it('should join message text, list server tool uses and sum usage (model_usage, falling back to usage)', () => {
    const turn = normalizeCmaTurn([
      msg('m1', 'a', 'b'),
      {
        type: 'agent.message',
        id: 'm2',
        content: [
          { type: 'thinking', thinking: 'no' },
          { type: 'text', text: 'c' },
        ],
      },
      { type: 'agent.tool_use', id: 's1', name: 'web_search', input: { q: 1 } },
      { type: 'agent.tool_use', id: 's2', name: 'bash' },
      { type: 'span.model_request_end', id: 'u1', model_usage: { input_tokens: 3, output_tokens: 2 } },
      { type: 'span.model_request_end', id: 'u2', usage: { input_tokens: 4, output_tokens: 1 } },
      { type: 'span.model_request_end', id: 'u3', model_usage: { input_tokens: 'x', output_tokens: -1 } },
      idle({ type: 'end_turn' }),
    ]);
    expect(turn.text).toBe('a\nb\nc');
    expect(turn.serverToolUses).toEqual([
      { id: 's1', name: 'web_search', input: { q: 1 } },
      { id: 's2', name: 'bash', input: {} },
    ]);
    expect(turn.usage).toEqual({ inputTokens: 7, outputTokens: 3 });
    expect(usageOf([])).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it('should never throw on odd input', () => {
    expect(() =>
      normalizeCmaTurn([{}, { type: 1 }, { type: 'session.status_idle', stop_reason: 'end_turn' }, { type: 'agent.message', content: 'x' }]),
    ).not.toThrow();
  });
});

describe('pendingCmaToolUses', () => {
  it('should return uses an idle asked for with no result, in call order, once each', () => {
    const history = [
      use('a'),
      use('b'),
      use('c'),
      idle({ type: 'requires_action', event_ids: ['b', 'a'] }),
      result('a'),
      use('d'),
      idle({ type: 'requires_action', event_ids: ['d', 'b'] }, 'i2'),
      use('b'),
    ];
    expect(pendingCmaToolUses(history).map((u) => u.id)).toEqual(['b', 'd']);
  });

  it('should leave out uses no idle named (not ours, or not asked yet)', () => {
    expect(pendingCmaToolUses([use('a'), idle({ type: 'end_turn' })])).toEqual([]);
    expect(pendingCmaToolUses([use('a')])).toEqual([]);
  });
});

describe('awaitingConfirmation', () => {
  const events = [
    { type: 'agent.tool_use', id: 'a', name: 'web_search', input: { q: 1 }, evaluated_permission: 'ask' },
    { type: 'agent.mcp_tool_use', id: 'b', name: 'delete_repo', mcp_server_name: 'github', input: {}, evaluated_permission: 'ask' },
    { type: 'agent.tool_use', id: 'c', name: 'bash', evaluated_permission: 'ask' },
    { type: 'agent.custom_tool_use', id: 'd', name: 'echo', input: {} },
    { type: 'user.tool_confirmation', tool_use_id: 'c', result: 'allow' },
  ];

  it('should return the named host tool uses no confirmation answers, in the order named, MCP ones as server/tool', () => {
    expect(awaitingConfirmation(events, ['d', 'b', 'c', 'a', 'b', 'zz'])).toEqual([
      { id: 'b', name: 'github/delete_repo', input: {} },
      { id: 'a', name: 'web_search', input: { q: 1 } },
    ]);
  });

  it('should be what normalizeCmaTurn reports for a requires_action idle', () => {
    const idle = { type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: ['d', 'a'] } };
    const turn = normalizeCmaTurn([...events, idle]);
    expect(turn.customToolUses.map((u) => u.id)).toEqual(['d']);
    expect(turn.confirmationToolUses?.map((u) => u.id)).toEqual(['a']);
    expect(normalizeCmaTurn([events[3]!, { ...idle, stop_reason: { type: 'requires_action', event_ids: ['d'] } }]).confirmationToolUses).toBeUndefined();
  });
});

describe('blockedOnConfirmation', () => {
  const ask = { type: 'agent.tool_use', id: 'a', name: 'web_search', evaluated_permission: 'ask' };
  const idle = { type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: ['a'] } };

  it('should name the asked tools of a last requires_action idle that no confirmation answers', () => {
    expect(blockedOnConfirmation([ask, idle]).map((u) => u.id)).toEqual(['a']);
    expect(blockedOnConfirmation([ask, idle, { type: 'user.tool_confirmation', tool_use_id: 'a', result: 'allow' }])).toEqual([]);
  });

  it('should return none when a later boundary ended the wait', () => {
    expect(blockedOnConfirmation([ask, idle, { type: 'session.status_idle', stop_reason: { type: 'end_turn' } }])).toEqual([]);
    expect(blockedOnConfirmation([])).toEqual([]);
  });
});

describe('CmaTextDeltas', () => {
  it('should give the whole text of a message without previews', () => {
    const d = new CmaTextDeltas();
    expect(d.delta(msg('m', 'one', 'two'))).toEqual({ text: 'one\ntwo', messageId: 'm' });
    expect(messageText(msg('m', 'one', 'two'))).toBe('one\ntwo');
    expect(d.delta({ type: 'agent.thinking', id: 't' })).toBeUndefined();
    expect(d.delta(msg('e'))).toBeUndefined();
  });

  it('should stream preview fragments and add only the rest from the final message', () => {
    const d = new CmaTextDeltas();
    const frag = (text: string, index = 0) => ({
      type: 'event_delta',
      event_id: 'm',
      delta: { type: 'content_delta', index, content: { type: 'text', text } },
    });
    const out = [
      d.delta({ type: 'event_start', event: { type: 'agent.message', id: 'm' } }),
      d.delta(frag('Hel')),
      d.delta(frag('lo')),
      d.delta(frag('X', 1)),
      d.delta(msg('m', 'Hello world', 'XY', 'Z')),
    ];
    expect(out).toEqual([
      undefined,
      { text: 'Hel', messageId: 'm' },
      { text: 'lo', messageId: 'm' },
      { text: '\nX', messageId: 'm' },
      { text: ' worldY\nZ', messageId: 'm' },
    ]);
    // Every character of the final message is reported exactly once.
    expect(
      out
        .map((o) => o?.text ?? '')
        .join('')
        .split('')
        .sort(),
    ).toEqual(
      messageText(msg('m', 'Hello world', 'XY', 'Z'))
        .split('')
        .sort(),
    );
    // Forgotten once concluded: a repeat of the message (a new id would be a new message) gives its whole text.
    expect(d.delta(msg('m', 'Hello world'))).toEqual({ text: 'Hello world', messageId: 'm' });
  });

  it('should report exactly the final text when previews arrive in block order', () => {
    const d = new CmaTextDeltas();
    const frag = (text: string, index: number) =>
      d.delta({ type: 'event_delta', event_id: 'q', delta: { type: 'content_delta', index, content: { type: 'text', text } } });
    const parts = [frag('Once ', 0), frag('upon', 0), frag('a ', 1), d.delta(msg('q', 'Once upon', 'a time'))];
    expect(parts.map((p) => p?.text ?? '').join('')).toBe('Once upon\na time');
  });

  it('should not repeat text when a preview diverged from the final message', () => {
    const d = new CmaTextDeltas();
    d.delta({ type: 'event_delta', event_id: 'm', delta: { content: { type: 'text', text: 'abc' } } });
    expect(d.delta(msg('m', 'xyz'))).toBeUndefined();
  });

  it('should forget the oldest unfinished preview beyond its bound', () => {
    const d = new CmaTextDeltas(2);
    for (const id of ['a', 'b', 'c']) d.delta({ type: 'event_delta', event_id: id, delta: { content: { type: 'text', text: 'p' } } });
    expect(d.delta(msg('a', 'pq'))).toEqual({ text: 'pq', messageId: 'a' });
    expect(d.delta(msg('c', 'pq'))).toEqual({ text: 'q', messageId: 'c' });
  });
});
