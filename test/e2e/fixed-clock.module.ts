import { ContainerModule } from '../../src/core/util/inversify.js';
import { Clock } from '../../src/plugins/tools/tools.config.js';

/** The instant the demo tool `get_time` reports under this module. */
export const FIXED_NOW = new Date('2026-03-10T09:30:00.000Z');

/**
 * A user module for `agentrx serve --module`: `get_time` reads a fixed clock ({@link FIXED_NOW}), so
 * the page shows the same answer, and takes the same screenshot, on every run. It loads after the
 * demo tools' module has bound the system clock, hence the rebind.
 */
export const modules = [
  new ContainerModule((options) => {
    options.rebind<Clock>(Clock).toConstantValue({ now: () => new Date(FIXED_NOW) });
  }),
];
