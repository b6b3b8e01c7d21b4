export { REDACTED, Secret, isSecret, SecretField, IsSecret, IS_SECRET, isSecretKey, redactedView, redactUrlCredentials } from './secret.js';
export {
  AgentRxConfig,
  AgentConfig,
  LimitsConfig,
  ConsumersConfig,
  StoreConfig,
  StoreRetentionConfig,
  TimeoutsConfig,
  MAX_TIMEOUT_MS,
  LOG_LEVELS,
  STORE_TYPES,
  type StoreType,
} from './agentrx.config.js';
export { type StoreSection, validateStoreSection } from './store-config.js';
export { type ConfigSection, type ConfigSectionScope, sectionPath, CoerceNumber, CoerceBoolean } from './config-section.js';
export { loadConfig, validateConfig, type ConfigEnv, type ConfigIssue, type LoadConfigOptions, type LoadedConfig } from './load-config.js';
