/**
 * `agentrx/nest`: the NestJS integration. Requires `@nestjs/common` and `@nestjs/core` (optional
 * peers of agentrx; the main `agentrx` entry never loads Nest). Without them, importing this entry
 * fails with one line naming what to install, not a module-resolution stack.
 */
import { importOptionalPeer } from '../core/util/optional-peer.js';

const nestPeer = { feature: 'agentrx/nest', install: ['@nestjs/common', '@nestjs/core', '@nestjs/platform-express'] };
await importOptionalPeer({ name: '@nestjs/common', ...nestPeer }, () => import('@nestjs/common'));
await importOptionalPeer({ name: '@nestjs/core', ...nestPeer }, () => import('@nestjs/core'));

const nestModule = await import('./agentrx.module.js');
const nestController = await import('./agentrx.controller.js');

/** Nest's injection token of the AgentRx instance: `@Inject(AGENTRX) rx: AgentRx`. */
export const AGENTRX: typeof nestModule.AGENTRX = nestModule.AGENTRX;
/** Nest's injection token of the module's options. */
export const AGENTRX_MODULE_OPTIONS: typeof nestModule.AGENTRX_MODULE_OPTIONS = nestModule.AGENTRX_MODULE_OPTIONS;
/** The Nest module: `AgentRxModule.forRoot(options)` / `forRootAsync(...)`. */
export const AgentRxModule: typeof nestModule.AgentRxModule = nestModule.AgentRxModule;
/** Builds the AgentRx instance of the module's options (what `forRoot` provides under `AGENTRX`). */
export const createAgentRx: typeof nestModule.createAgentRx = nestModule.createAgentRx;
/** Nest's injection token of the AG-UI handler the module mounts. */
export const AGENTRX_AGUI_HANDLER: typeof nestController.AGENTRX_AGUI_HANDLER = nestController.AGENTRX_AGUI_HANDLER;
/** A Nest controller class serving the AG-UI endpoint under a path. */
export const createAgUiController: typeof nestController.createAgUiController = nestController.createAgUiController;
export type { AgentRxAgUiOptions, AgentRxModuleAsyncOptions, AgentRxModuleOptions, AgentRxModuleRootOptions } from './agentrx.module.js';
export type { AgUiMount } from './agentrx.controller.js';
