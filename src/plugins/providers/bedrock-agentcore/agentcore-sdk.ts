import { AgentRxError } from '../../../core/errors.js';
import { isModuleNotFound, missingPeerError } from '../../../core/util/optional-peer.js';

/**
 * Lazy loading of the AWS SDK packages of the `bedrock-agentcore` provider. They are needed only
 * by users who select this provider, so nothing imports them statically: the provider module
 * registers cheaply and synchronously, and the packages are imported (once per process) at the
 * first call that needs them — `open`, `provision`, `teardown`. When a package is not installed,
 * that call fails with `invalid_config` saying what to install.
 */

/** The data-plane SDK (`InvokeHarness`). */
export type AgentCoreDataSdk = typeof import('@aws-sdk/client-bedrock-agentcore');
/** The control-plane SDK (`CreateHarness`…). */
export type AgentCoreControlSdk = typeof import('@aws-sdk/client-bedrock-agentcore-control');

/** The data-plane package name. */
export const DATA_SDK_PACKAGE = '@aws-sdk/client-bedrock-agentcore';
/** The control-plane package name. */
export const CONTROL_SDK_PACKAGE = '@aws-sdk/client-bedrock-agentcore-control';

/** How a package is imported (a dynamic `import()`; replaceable in tests). */
export type SdkImporter<T> = () => Promise<T>;

let dataSdk: Promise<AgentCoreDataSdk> | undefined;
let controlSdk: Promise<AgentCoreControlSdk> | undefined;

/**
 * `@aws-sdk/client-bedrock-agentcore`, imported on first use and cached. Rejects with
 * `invalid_config` ("install … to use the bedrock-agentcore provider") when it is not installed;
 * a failed import is not cached, so installing the package and retrying works.
 */
export function loadDataSdk(importer: SdkImporter<AgentCoreDataSdk> = () => import('@aws-sdk/client-bedrock-agentcore')): Promise<AgentCoreDataSdk> {
  dataSdk ??= loadSdk(DATA_SDK_PACKAGE, importer).catch((e: unknown) => {
    dataSdk = undefined;
    throw e;
  });
  return dataSdk;
}

/** `@aws-sdk/client-bedrock-agentcore-control`, imported on first use and cached (see `loadDataSdk`). */
export function loadControlSdk(
  importer: SdkImporter<AgentCoreControlSdk> = () => import('@aws-sdk/client-bedrock-agentcore-control'),
): Promise<AgentCoreControlSdk> {
  controlSdk ??= loadSdk(CONTROL_SDK_PACKAGE, importer).catch((e: unknown) => {
    controlSdk = undefined;
    throw e;
  });
  return controlSdk;
}

/**
 * Imports one SDK package. A missing package (or a missing dependency of it) becomes
 * `invalid_config` naming the packages to install; any other failure is a `provider_error`.
 */
export async function loadSdk<T>(name: string, importer: SdkImporter<T>): Promise<T> {
  try {
    return await importer();
  } catch (e) {
    if (isModuleNotFound(e)) throw missingPeerError({ name, feature: 'the bedrock-agentcore provider', install: [DATA_SDK_PACKAGE, CONTROL_SDK_PACKAGE] });
    const message = e instanceof Error ? e.message : String(e);
    throw new AgentRxError('provider_error', `loading ${name} failed: ${message}`, { package: name }, { cause: e });
  }
}
