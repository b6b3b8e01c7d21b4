/**
 * Multi-bound token under which plugin modules contribute their `ConfigSection` (a plain
 * object, bound with toConstantValue). The facade validates every section with the core config.
 */
export const ConfigSections = Symbol('ConfigSections');

/** The validated core `AgentRxConfig`, bound as a constant after validation. */
export const AgentRxConfigToken = Symbol('AgentRxConfig');
