/**
 * The instance's {@link ProvisionStore}: the provision store of the configured `store` section,
 * opened through its engine's registration (a lazy singleton bound by the core module, closed
 * when the container unbinds). Providers inject it `@optional()` for their `Provisioner`.
 */
export const ProvisionStoreToken = Symbol('ProvisionStore');
