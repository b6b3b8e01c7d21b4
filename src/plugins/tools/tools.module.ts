import { bindPlugin } from '../../core/di/bind-plugin.js';
import { ContainerModule } from '../../core/util/inversify.js';
import { ToolHandler } from '../../core/plugin/tool-handler.js';
import { AddTodoToolHandler } from './add-todo.tool.js';
import { CalculateToolHandler } from './calculate.tool.js';
import { GetTimeToolHandler } from './get-time.tool.js';
import { ReadFileToolHandler } from './read-file.tool.js';
import { SendEmailToolHandler } from './send-email.tool.js';
import { Clock, ReadFileOptions, systemClock } from './tools.config.js';

/**
 * The demo tools `get_time`, `calculate` and `read_file`, each bound as a singleton and under
 * the `ToolHandler` token. Binds defaults only for what is not bound yet when the module loads:
 * `Clock` → {@link systemClock}, `ReadFileOptions` → `{ root: process.cwd() }` (the working
 * directory at load time). To override either, bind it before loading this module.
 */
export const demoToolsModule = new ContainerModule((options) => {
  if (!options.isBound(Clock)) options.bind<Clock>(Clock).toConstantValue(systemClock);
  if (!options.isBound(ReadFileOptions)) options.bind<ReadFileOptions>(ReadFileOptions).toConstantValue({ root: process.cwd() });
  bindPlugin(options, GetTimeToolHandler, ToolHandler);
  bindPlugin(options, CalculateToolHandler, ToolHandler);
  bindPlugin(options, ReadFileToolHandler, ToolHandler);
});

/**
 * Binds `read_file`'s {@link ReadFileOptions} to `{ root }` unless they are bound already: load it
 * before {@link demoToolsModule} to read from another folder than the process's working directory
 * (the CLI passes the working directory of the invocation, `CliIo.cwd`).
 */
export function readFileRootModule(root: string): ContainerModule {
  return new ContainerModule((options) => {
    if (!options.isBound(ReadFileOptions)) options.bind<ReadFileOptions>(ReadFileOptions).toConstantValue({ root });
  });
}

/**
 * The demo tools that show what an AG-UI client takes part in: `add_todo`, which changes the
 * agent state shared with the client (a STATE_DELTA), and `send_email`, which needs the user's
 * approval before it runs (an interrupt) and only pretends to send. Each is bound as a singleton
 * and under the `ToolHandler` token; they need no options. `agentrx demo` and `agentrx serve
 * --demo` / `--demo-tools` load it next to {@link demoToolsModule}.
 */
export const demoAgUiToolsModule = new ContainerModule((options) => {
  bindPlugin(options, AddTodoToolHandler, ToolHandler);
  bindPlugin(options, SendEmailToolHandler, ToolHandler);
});
