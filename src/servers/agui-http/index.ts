export {
  AgUiHttpOptions,
  AgUiHttpOptionsClass,
  DEFAULT_MAX_BODY_BYTES,
  aguiHttpConfigSection,
  resolveAgUiHttpOptions,
  type AgUiHttpOptionsInput,
} from './agui-http.config.js';
export { createAgUiHandler, type AgUiHandlerOptions, type AgUiHttpHandler, type AgUiSessionHost } from './agui-http.handler.js';
export { MAX_ID_LENGTH, parseRunAgentInput, type AgUiRunRequest, type AgUiRunRequestResult } from './agui-http.input.js';
export { aguiHttpModule } from './agui-http.module.js';
export { aguiPage, type AgUiPage } from './agui-http.page.js';
export { startAgUiServer, type AgUiServer, type AgUiServerOptions } from './agui-http.server.js';
