import { DEMO_MODEL_LABEL, demoModelTurn, findEmail, findTodo, type DemoModelRequest } from '../../src/testing/demo-model.js';

/** A tool as a chat-completions request declares it. */
const tool = (name: string, properties: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'function',
  function: { name, description: name, parameters: { type: 'object', properties } },
});

const ALL_TOOLS = [
  tool('get_time'),
  tool('calculate', { expression: { type: 'string' } }),
  tool('read_file', { path: { type: 'string' } }),
  tool('add_todo', { text: { type: 'string' } }),
  tool('send_email', { to: { type: 'string' }, subject: { type: 'string' } }),
];

const user = (content: string): Record<string, unknown> => ({ role: 'user', content });
const calls = (...c: [id: string, name: string, args: Record<string, unknown>][]): Record<string, unknown> => ({
  role: 'assistant',
  content: null,
  tool_calls: c.map(([id, name, args]) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } })),
});
const result = (id: string, content: string): Record<string, unknown> => ({ role: 'tool', tool_call_id: id, content });

/** An earlier exchange whose tool result got no answer (a run cut short): the history ends with the result. */
const EARLIER = [user('what is 2 + 2'), calls(['c1', 'calculate', { expression: '2 + 2' }]), result('c1', '2 + 2 = 4')];

const turn = (messages: unknown[], tools: unknown[] = ALL_TOOLS): ReturnType<typeof demoModelTurn> => demoModelTurn({ messages, tools } as DemoModelRequest);
const picked = (t: ReturnType<typeof demoModelTurn>): [string, unknown][] => (t.toolCalls ?? []).map((c) => [c.name, c.arguments]);

describe('demoModelTurn', () => {
  describe('when a newer user message follows an earlier tool result', () => {
    it('should answer the newer message, not quote the old result again', () => {
      const t = turn([...EARLIER, user('hello there')]);
      expect(t.toolCalls).toBeUndefined();
      expect(t.text).toContain('You said: "hello there".');
      expect(t.text).not.toContain('2 + 2 = 4');
    });

    it("should pick tools for the newer message's own request", () => {
      expect(picked(turn([...EARLIER, user('and what time is it?')]))).toEqual([['get_time', {}]]);
    });

    it('should answer it the same when the earlier result was answered', () => {
      const t = turn([...EARLIER, { role: 'assistant', content: 'It is 4.' }, user('hello there')]);
      expect(t.text).toContain('You said: "hello there".');
    });
  });

  describe('when tool results follow the newest user message, after an earlier exchange', () => {
    it('should quote only the results that follow it', () => {
      const t = turn([...EARLIER, user('what time is it'), calls(['c2', 'get_time', {}]), result('c2', '2030-01-02T03:04:05Z')]);
      expect(t.toolCalls).toBeUndefined();
      expect(t.text).toBe(
        `${DEMO_MODEL_LABEL} Here is what the tools told me:\n- get_time returned: "2030-01-02T03:04:05Z"\nSummary: I used 1 tool (get_time) and quoted 1 result above.`,
      );
    });
  });

  describe("when the local provider's FINAL TURN directive follows the newest user message and its results", () => {
    it('should still quote those results', () => {
      const t = turn([user('what time is it'), calls(['c2', 'get_time', {}]), result('c2', 'noon'), user('FINAL TURN: answer now.')]);
      expect(t.text).toContain('- get_time returned: "noon"');
    });
  });

  describe('when the user asks to add a todo', () => {
    it('should call add_todo with the text after the keyword', () => {
      expect(picked(turn([user('Add a todo: buy milk.')]))).toEqual([['add_todo', { text: 'buy milk' }]]);
      expect(picked(turn([...EARLIER, user('remind me to call Bob')]))).toEqual([['add_todo', { text: 'call Bob' }]]);
    });
  });

  describe('when the user asks to change the state without a todo text', () => {
    it('should add the whole message as the todo', () => {
      expect(picked(turn([user('Please change the state!')]))).toEqual([['add_todo', { text: 'Please change the state' }]]);
    });
  });

  describe('when the user asks to send an e-mail', () => {
    it('should call send_email with the address and the subject from the message', () => {
      expect(picked(turn([user('Send an email to bob@example.com about the launch party.')]))).toEqual([
        ['send_email', { to: 'bob@example.com', subject: 'the launch party' }],
      ]);
    });
  });

  describe('when a request asks for a todo and an e-mail in one message', () => {
    it('should call both tools in one turn, add_todo first', () => {
      expect(picked(turn([user('add a todo to water the plants and email ann@example.org')])).map(([name]) => name)).toEqual(['add_todo', 'send_email']);
    });
  });

  describe('when the new tools are not declared in the request', () => {
    it('should not call them, and not offer them in its hint', () => {
      const t = turn([user('add a todo: buy milk, then send an email')], ALL_TOOLS.slice(0, 3));
      expect(t.toolCalls).toBeUndefined();
      expect(t.text).toContain(
        'I can use get_time, calculate, read_file: ask me for the time, for arithmetic such as (17 + 25) * 3, or about a file such as README.md.',
      );
    });
  });

  describe('when the tool names its input differently', () => {
    it("should use the schema's only string property", () => {
      const t = turn([user('add a todo: buy milk')], [tool('add_todo', { title: { type: 'string' } })]);
      expect(picked(t)).toEqual([['add_todo', { title: 'buy milk' }]]);
    });
  });

  describe('when the message has no keyword and every demo tool is declared', () => {
    it('should name all five tools in its hint', () => {
      expect(turn([user('hi')]).text).toContain('I can use get_time, calculate, read_file, add_todo, send_email: ask me');
    });
  });

  describe('when asked the same request twice', () => {
    it('should give the same turn', () => {
      const messages = [...EARLIER, user('add a todo: buy milk and send an email to bob@example.com about it')];
      expect(turn(messages)).toEqual(turn(messages));
    });
  });
});

describe('findTodo', () => {
  describe('when called with messages asking for a todo, and not', () => {
    it('should return the todo text, or undefined', () => {
      expect(findTodo('add a to-do item: water the plants')).toBe('water the plants');
      expect(findTodo('Add a todo to buy milk')).toBe('buy milk');
      expect(findTodo('Add a todo: buy milk. Then send an email')).toBe('buy milk');
      expect(findTodo('todo: call Ann, then the time')).toBe('call Ann');
      expect(findTodo('what time is it')).toBeUndefined();
      expect(findTodo('x'.repeat(50) + ' todo: ' + 'y'.repeat(200))).toHaveLength(120);
    });
  });
});

describe('findEmail', () => {
  describe('when the message names no address or subject', () => {
    it('should fall back to a fixed address and subject', () => {
      expect(findEmail('send an email')).toEqual({ to: 'someone@example.com', subject: 'A message from the agentrx demo' });
    });
  });

  describe('when the message has a subject line and an address ending a sentence', () => {
    it('should take both without the punctuation', () => {
      expect(findEmail('mail ann@example.org. Subject: "Lunch?"')).toEqual({ to: 'ann@example.org', subject: 'Lunch' });
    });
  });
});
