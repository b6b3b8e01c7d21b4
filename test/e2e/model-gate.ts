import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A chat-completions request body as the gate sees it (only what a match reads). */
export interface GatedRequest {
  readonly messages: readonly { readonly role?: unknown; readonly content?: unknown }[];
}

/** One held model request: the test decides when the model answers it. */
export interface Hold {
  /** Resolves once a matching request has arrived and is being held. */
  readonly reached: Promise<void>;
  /** Lets the held request (or, released before one arrived, the next matching one) through. */
  release(): void;
}

/**
 * A loopback pass-through in front of an OpenAI-compatible model (the demo model): every request
 * is forwarded as it is and its answer streamed back, except the one a `hold` matches, which waits
 * until the test releases it. Holding the model is how a test keeps an agent run under way for as
 * long as it needs (a slow model, made deterministic), e.g. to reload a page mid-run.
 */
export interface ModelGate {
  /** `http://127.0.0.1:<port>/v1`: the model's base URL, through the gate. */
  readonly baseUrl: string;
  /** Holds the next request whose body `matches` (checked in arrival order). */
  hold(matches: (body: GatedRequest) => boolean): Hold;
  /** Releases what is held, stops the gate and closes its connections. */
  close(): Promise<void>;
}

interface Armed {
  readonly matches: (body: GatedRequest) => boolean;
  readonly arrive: () => void;
  readonly released: Promise<void>;
  taken: boolean;
}

/** Starts a gate on 127.0.0.1 in front of `target` (an `http://127.0.0.1:<port>/v1` base URL). */
export async function startModelGate(target: string): Promise<ModelGate> {
  const upstream = new URL(target);
  const armed: Armed[] = [];
  const releases: (() => void)[] = [];

  const server = createServer((req, res) => {
    void pass(req, res).catch(() => res.destroy());
  });

  async function pass(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const gated = parse(body);
    const hold = gated ? armed.find((a) => !a.taken && a.matches(gated)) : undefined;
    if (hold) {
      hold.taken = true;
      hold.arrive();
      await hold.released;
      if (res.destroyed) return;
    }
    const out = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host, 'content-length': String(body.length) },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    // The client (the agent) gave up: stop asking the model for it.
    res.on('close', () => out.destroy());
    out.end(body);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${upstream.pathname.replace(/\/$/, '')}`,
    hold(matches) {
      let arrive!: () => void;
      let release!: () => void;
      const reached = new Promise<void>((resolve) => (arrive = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      armed.push({ matches, arrive, released, taken: false });
      releases.push(release);
      return { reached, release };
    },
    async close() {
      for (const release of releases) release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function parse(body: Buffer): GatedRequest | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    if (typeof value === 'object' && value !== null && Array.isArray((value as { messages?: unknown }).messages)) return value as GatedRequest;
  } catch {
    // not JSON (e.g. GET /v1/models): nothing to match
  }
  return undefined;
}
