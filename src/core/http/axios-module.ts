import type * as Axios from 'axios';

/**
 * axios, loaded at first use: importing it (about 100 modules with its dependencies) was a fifth
 * of the package's import time, and a process that never sends a request through a factory
 * client (a CLI's `--help`, a Local session's set-up before its first model call) need not pay
 * it. The ES module entry is loaded, the one a host's `import axios from 'axios'` gets, so
 * `instanceof AxiosError` holds for the errors of every client the factory makes.
 */
export type AxiosModule = typeof Axios;

let loaded: AxiosModule | undefined;
let loading: Promise<AxiosModule> | undefined;

/** Loads axios once; later calls resolve with the same module. */
export function loadAxios(): Promise<AxiosModule> {
  loading ??= import('axios').then((m) => (loaded = m));
  return loading;
}

/** axios if `loadAxios` has resolved, else undefined. */
export function loadedAxios(): AxiosModule | undefined {
  return loaded;
}

/**
 * axios, for code that runs only once it is loaded (a client the factory made exists). Throws an
 * Error that says what to await when it is not.
 */
export function axiosModule(): AxiosModule {
  if (!loaded) {
    throw new Error(
      'axios is not loaded yet: await HttpClientFactory.ready() (or loadAxios()) before HttpClientFactoryImpl.create(); the factory loads axios at first use',
    );
  }
  return loaded;
}

/** Runs `fn` with axios: in this turn when it is loaded, else once it is. */
export function withAxios<T>(fn: (axios: AxiosModule) => Promise<T>): Promise<T> {
  return loaded ? fn(loaded) : loadAxios().then(fn);
}
