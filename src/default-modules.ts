import type { ContainerModule } from './core/di/inversify.js';

/** The built-in provider modules loaded by `AgentRx.create` unless `defaults: false`. */
export function defaultModules(): ContainerModule[] {
  return [];
}
