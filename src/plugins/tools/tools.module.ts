import { bindPlugin } from '../../core/di/bind-plugin.js';
import { ContainerModule } from '../../core/util/inversify.js';
import { ToolHandler } from '../../core/plugin/tool-handler.js';
import { CalculateToolHandler } from './calculate.tool.js';
import { GetTimeToolHandler } from './get-time.tool.js';
import { ReadFileToolHandler } from './read-file.tool.js';
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
