import { IsString, Length } from '../../core/util/class-validator.js';
import { JSONSchema } from '../../core/util/class-validator.js';
import { injectable } from '../../core/util/inversify.js';
import type { ToolContext, ToolHandler } from '../../core/plugin/tool-handler.js';

/** Longest accepted todo text, in characters. */
export const MAX_TODO_LENGTH = 200;

/** Input of `add_todo`. */
export class AddTodoInput {
  /** What to do, 1–200 characters, e.g. `buy milk`. */
  @JSONSchema({ description: 'What to do, e.g. "buy milk".' })
  @IsString()
  @Length(1, MAX_TODO_LENGTH)
  text!: string;
}

/** One entry of the shared state's `todos` list, as `add_todo` writes it. */
export interface DemoTodo extends Record<string, unknown> {
  readonly text: string;
  readonly done: boolean;
}

/**
 * `add_todo`: appends `{ text, done: false }` to the `todos` list of the session's shared agent
 * state (`ctx.state`), creating the list when absent. The session publishes the change after the
 * result as an AG-UI STATE_DELTA, so a client holding the state sees the new todo. Returns plain
 * text naming the todo and the list's new length.
 *
 * Throws (the core reports an `is_error` result) when the session has no shared state (a client
 * that sent no `state`) or when its `todos` is not a list. Each call adds one entry, so it is not
 * idempotent.
 */
@injectable()
export class AddTodoToolHandler implements ToolHandler<AddTodoInput> {
  readonly name = 'add_todo';
  readonly description =
    'Adds a todo to the todo list in the agent state shared with the client (its "todos" array of { text, done }). ' +
    'The client sees the change as a state update.';
  readonly inputType = AddTodoInput;

  handle(input: AddTodoInput, ctx: ToolContext): string {
    ctx.signal.throwIfAborted();
    const state = ctx.state;
    if (state === undefined) {
      throw new Error('this session has no shared state to keep todos in (an AG-UI client sends one as its "state")');
    }
    const todos = state['todos'] ?? [];
    if (!Array.isArray(todos)) throw new Error('the shared state\'s "todos" is not a list, so no todo was added');
    const text = input.text.trim();
    const todo: DemoTodo = { text, done: false };
    state['todos'] = [...(todos as unknown[]), todo];
    const count = todos.length + 1;
    return `added todo "${text}"; the shared state now lists ${count} todo${count === 1 ? '' : 's'}`;
  }
}
