import { sseFrames } from './agui-http.fixtures.js';

/** What a {@link droppingFetch} client saw: frames before the drop, the id it resumed from, frames after. */
export interface DropRecord {
  first: { type: string; id: string | undefined }[];
  resumedFrom: string | undefined;
  second: { type: string; id: string | undefined }[];
  /** Resolves once the reconnect was answered 200. */
  readonly reconnected: Promise<void>;
}

/**
 * A fetch for `HttpAgent` that plays a client whose connection drops: it passes the first
 * response's SSE frames through up to the frame that carries an id once `cutAfter` matched, then
 * aborts that request and re-POSTs the same RunAgentInput to `reconnectUrl` (another node) with
 * `Last-Event-ID: <that id>`, passing the second response through. Frames after the last id seen
 * (a group cut in two) are dropped, as a resuming client must: they come again.
 */
export function droppingFetch(reconnectUrl: string, cutAfter: (ev: { type: string }) => boolean): { fetch: typeof fetch; seen: DropRecord } {
  let markReconnected!: () => void;
  const seen: DropRecord = { first: [], resumedFrom: undefined, second: [], reconnected: new Promise<void>((resolve) => (markReconnected = resolve)) };
  const fetchFn = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const ctrl = new AbortController();
    const first = await fetch(input, { ...init, signal: ctrl.signal });
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async start(out) {
        const decoder = new TextDecoder();
        const reader = first.body!.getReader();
        let text = '';
        let lastId: string | undefined;
        let cut = false;
        while (!cut) {
          const { value, done } = await reader.read();
          if (done) throw new Error('the first stream ended before the cut');
          text += decoder.decode(value, { stream: true });
          const boundary = text.lastIndexOf('\n\n');
          if (boundary < 0) continue;
          const complete = text.slice(0, boundary + 2);
          text = text.slice(boundary + 2);
          let pass = '';
          let pending = '';
          let matched = false;
          for (const frame of complete.split('\n\n').slice(0, -1)) {
            pending += `${frame}\n\n`;
            const [parsed] = sseFrames(`${frame}\n\n`);
            if (parsed) {
              seen.first.push({ type: parsed.event.type, id: parsed.id });
              matched ||= cutAfter(parsed.event);
            }
            if (parsed?.id !== undefined) {
              pass += pending;
              pending = '';
              lastId = parsed.id;
              if (matched) break;
            }
          }
          out.enqueue(encoder.encode(pass));
          cut = matched && lastId !== undefined;
        }
        // The connection drops; the frames after the last id never reached the client.
        ctrl.abort();
        let end = seen.first.length;
        while (end > 0 && seen.first[end - 1]!.id !== lastId) end--;
        seen.first = seen.first.slice(0, end);
        seen.resumedFrom = lastId;
        const second = await fetch(reconnectUrl, { ...init, headers: { ...(init?.headers as Record<string, string>), 'Last-Event-ID': lastId! } });
        if (second.status !== 200) throw new Error(`reconnect answered ${second.status}: ${await second.text()}`);
        markReconnected();
        const reader2 = second.body!.getReader();
        let all = '';
        for (;;) {
          const { value, done } = await reader2.read();
          if (done) break;
          all += decoder.decode(value, { stream: true });
          out.enqueue(value);
        }
        seen.second = sseFrames(all).map((f) => ({ type: f.event.type, id: f.id }));
        out.close();
      },
    });
    return new Response(body, { status: first.status, headers: first.headers });
  };
  return { fetch: fetchFn as typeof fetch, seen };
}
