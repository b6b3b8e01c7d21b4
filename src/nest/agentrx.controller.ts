import type { IncomingMessage, ServerResponse } from 'node:http';
import { All, Controller, Inject, Req, Res, type Type } from '@nestjs/common';
import type { AgUiHttpHandler } from '../servers/agui-http/agui-http.handler.js';

/**
 * Injection token of the AG-UI `node:http` handler (`createAgUiHandler`) that
 * `AgentRxModule.forRoot({ agui })` builds from the module's `AgentRx` instance. Exported by the
 * module when `agui` is on, e.g. to read `activeRuns`.
 */
export const AGENTRX_AGUI_HANDLER = Symbol('AGENTRX_AGUI_HANDLER');

/** Where and what the AG-UI controller mounts (decided when the module is declared). */
export interface AgUiMount {
  /**
   * Route prefix of the controller, e.g. `'agui'` → `POST /agui/agent`. Default `''`:
   * `POST /agent`, `GET /healthz` and (with `page`) `GET /` at the app root (after any global
   * prefix).
   */
  readonly path?: string;
  /** Mount the built-in chat page at the prefix itself. Default true. */
  readonly page?: boolean;
}

/**
 * Builds the Nest controller that hands requests to the AG-UI handler (express platform):
 * `<path>/agent` (POST, and OPTIONS for CORS preflight), `<path>/healthz` and, with `page`,
 * `<path>` itself. Responses are written by the handler (`@Res()`), so Nest interceptors and
 * exception filters do not apply; the handler uses the body Nest's JSON parser already read
 * (Nest's own body-size limit applies first). The request URL is rewritten to the handler's
 * local path (`/agent`, keeping the query) the way express does for mounted middleware, so
 * global prefixes and versioning need no configuration.
 *
 * @param mount Route prefix and whether the page is served.
 * @returns A controller class for `DynamicModule.controllers`; it injects {@link AGENTRX_AGUI_HANDLER}.
 */
export function createAgUiController(mount: AgUiMount = {}): Type<unknown> {
  const path = (mount.path ?? '').replace(/^\/+|\/+$/g, '');

  @Controller(path)
  class AgentRxAgUiController {
    constructor(@Inject(AGENTRX_AGUI_HANDLER) readonly handler: AgUiHttpHandler) {}

    /** `POST <path>/agent`: one AG-UI run, streamed as SSE (or protobuf); OPTIONS answers CORS preflight. */
    @All('agent')
    agent(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
      this.forward('/agent', req, res);
    }

    /** `GET <path>/healthz`. */
    @All('healthz')
    healthz(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
      this.forward('/healthz', req, res);
    }

    /** `GET <path>`: the built-in chat page (routed only when `page` is on). */
    page(req: IncomingMessage, res: ServerResponse): void {
      this.forward('/', req, res);
    }

    private forward(local: string, req: IncomingMessage, res: ServerResponse): void {
      const url = req.url ?? '/';
      const query = url.indexOf('?');
      req.url = query >= 0 ? `${local}${url.slice(query)}` : local;
      this.handler(req, res);
    }
  }

  if (mount.page !== false) {
    // Decorators applied by hand: the page route exists only when asked for.
    const proto = AgentRxAgUiController.prototype;
    Req()(proto, 'page', 0);
    Res()(proto, 'page', 1);
    All()(proto, 'page', Object.getOwnPropertyDescriptor(proto, 'page')!);
  }
  return AgentRxAgUiController;
}
