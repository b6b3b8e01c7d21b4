import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { ToolHandler, type ToolContext } from '../../../src/core/plugin/tool-handler.js';
import { inputSchemaOf } from '../../../src/core/tools/tool-schema.js';
import { Container } from '../../../src/core/util/inversify.js';
import {
  AddTodoInput,
  AddTodoToolHandler,
  demoAgUiToolsModule,
  MAX_TODO_LENGTH,
  SendEmailInput,
  SendEmailToolHandler,
} from '../../../src/plugins/tools/index.js';

function contextWith(state?: Record<string, unknown>): ToolContext {
  return {
    toolUseId: 'toolu_1',
    sessionId: 'sess_1',
    idempotencyKey: 'sess_1:toolu_1',
    signal: new AbortController().signal,
    deadline: Date.now() + 60_000,
    ...(state !== undefined ? { state } : {}),
  };
}

/** Names of the constraints class-validator reports for `input` of `type`, keyed by property. */
function violations(type: new () => object, input: object): Record<string, string[]> {
  return Object.fromEntries(validateSync(plainToInstance(type, input)).map((e) => [e.property, Object.keys(e.constraints ?? {})]));
}

describe('AddTodoToolHandler', () => {
  describe('.handle', () => {
    describe('when called with a shared state that has no todos yet', () => {
      let state: Record<string, unknown>;
      let out: string;
      beforeEach(() => {
        state = { theme: 'dark' };
        out = new AddTodoToolHandler().handle({ text: '  buy milk ' }, contextWith(state));
      });

      it('should add the todo to a new todos list in the state, leaving the rest', () => {
        expect(state).toEqual({ theme: 'dark', todos: [{ text: 'buy milk', done: false }] });
      });

      it('should say what it added and how many todos there are', () => {
        expect(out).toBe('added todo "buy milk"; the shared state now lists 1 todo');
      });
    });

    describe('when the state already lists todos', () => {
      it('should append after them', () => {
        const state: Record<string, unknown> = { todos: [{ text: 'a', done: true }] };
        expect(new AddTodoToolHandler().handle({ text: 'b' }, contextWith(state))).toBe('added todo "b"; the shared state now lists 2 todos');
        expect(state['todos']).toEqual([
          { text: 'a', done: true },
          { text: 'b', done: false },
        ]);
      });
    });

    describe('when the session has no shared state', () => {
      it('should throw, saying so', () => {
        expect(() => new AddTodoToolHandler().handle({ text: 'b' }, contextWith())).toThrow(/no shared state/);
      });
    });

    describe("when the state's todos is not a list", () => {
      it('should throw and leave the state as it was', () => {
        const state: Record<string, unknown> = { todos: 'none' };
        expect(() => new AddTodoToolHandler().handle({ text: 'b' }, contextWith(state))).toThrow(/not a list/);
        expect(state).toEqual({ todos: 'none' });
      });
    });
  });

  describe('.inputType', () => {
    describe('when validating inputs', () => {
      it('should accept 1 to MAX_TODO_LENGTH characters', () => {
        expect(violations(AddTodoInput, { text: 'x' })).toEqual({});
        expect(violations(AddTodoInput, { text: '' })).toEqual({ text: ['isLength'] });
        expect(violations(AddTodoInput, { text: 'x'.repeat(MAX_TODO_LENGTH + 1) })).toEqual({ text: ['isLength'] });
      });
    });
  });
});

describe('SendEmailToolHandler', () => {
  describe('.requireApproval', () => {
    describe('when read', () => {
      it('should declare that every call needs approval', () => {
        expect(new SendEmailToolHandler().requireApproval).toBe(true);
      });
    });
  });

  describe('.handle', () => {
    describe('when called with an address and a subject', () => {
      it('should only pretend, and say so', () => {
        expect(new SendEmailToolHandler().handle({ to: 'bob@example.com', subject: 'Launch ' }, contextWith())).toBe(
          'pretended to send an e-mail to bob@example.com with the subject "Launch"; nothing was sent (send_email is a demo tool)',
        );
      });
    });
  });

  describe('.inputType', () => {
    describe('when validating inputs', () => {
      it('should require an e-mail address and a subject', () => {
        expect(violations(SendEmailInput, { to: 'bob@example.com', subject: 'hi' })).toEqual({});
        expect(violations(SendEmailInput, { to: 'bob', subject: '' })).toEqual({ to: ['isEmail'], subject: ['isLength'] });
      });
    });
  });
});

describe('demoAgUiToolsModule', () => {
  describe('.load', () => {
    describe('when loaded into an empty container', () => {
      it('should bind add_todo and send_email under ToolHandler, with input schemas from their DTOs', () => {
        const container = new Container();
        container.load(demoAgUiToolsModule);
        const tools = container.getAll<ToolHandler>(ToolHandler);
        expect(tools.map((t) => t.name)).toEqual(['add_todo', 'send_email']);
        expect(tools).toContain(container.get(AddTodoToolHandler));
        expect(Object.keys(inputSchemaOf(tools[0]!).properties as object)).toEqual(['text']);
        expect(inputSchemaOf(tools[1]!).required).toEqual(['to', 'subject']);
      });
    });
  });
});
