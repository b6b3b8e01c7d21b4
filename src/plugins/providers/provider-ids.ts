/** The ids of the built-in providers, in a module of their own: the CLI's help names them without loading the providers. */
export const LOCAL_PROVIDER_ID = 'local';
export const CMA_PROVIDER_ID = 'claude-managed-agents';
export const AGENTCORE_PROVIDER_ID = 'bedrock-agentcore';

/** The ids the built-in provider modules register (what the CLI offers for `--provider`). */
export const BUILTIN_PROVIDER_IDS = [LOCAL_PROVIDER_ID, CMA_PROVIDER_ID, AGENTCORE_PROVIDER_ID] as const;
