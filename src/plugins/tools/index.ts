export { AddTodoInput, AddTodoToolHandler, MAX_TODO_LENGTH, type DemoTodo } from './add-todo.tool.js';
export { CalculateInput, CalculateToolHandler, formatNumber } from './calculate.tool.js';
export { evaluateExpression, ExpressionError, MAX_EXPRESSION_LENGTH } from './expression.js';
export { GetTimeInput, GetTimeToolHandler, type GetTimeResult } from './get-time.tool.js';
export { ReadFileInput, ReadFileToolHandler } from './read-file.tool.js';
export { SendEmailInput, SendEmailToolHandler } from './send-email.tool.js';
export {
  Clock,
  DEFAULT_READ_FILE_MAX_BYTES,
  MAX_READ_FILE_MAX_BYTES,
  ReadFileConfig,
  ReadFileOptions,
  resolveReadFileOptions,
  systemClock,
} from './tools.config.js';
export { demoAgUiToolsModule, demoToolsModule } from './tools.module.js';
