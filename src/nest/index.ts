/**
 * `agentrx/nest`: the NestJS integration. Requires `@nestjs/common` and `@nestjs/core` (optional
 * peers of agentrx; the main `agentrx` entry never loads Nest).
 */
export {
  AGENTRX,
  AGENTRX_MODULE_OPTIONS,
  AgentRxModule,
  createAgentRx,
  type AgentRxAgUiOptions,
  type AgentRxModuleAsyncOptions,
  type AgentRxModuleOptions,
  type AgentRxModuleRootOptions,
} from './agentrx.module.js';
export { AGENTRX_AGUI_HANDLER, createAgUiController, type AgUiMount } from './agentrx.controller.js';
