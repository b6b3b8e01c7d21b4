import type { Redis } from 'ioredis';

interface Watched {
  /** The stream id after which an entry wakes the watchers. */
  cursor: string;
  readonly wakes: Set<() => void>;
}

/**
 * One blocking reader per store, shared by all its tails: a single `XREAD BLOCK` on a dedicated
 * connection over every watched stream, so a thousand tails cost one socket, not a thousand. It
 * only says "this stream has entries after what you saw" (`wake`); each tail then reads its own
 * pages with XRANGE from its own position, so a tail that attaches mid-log or falls behind needs
 * no buffering here. A stream added while the reader blocks interrupts it with `CLIENT UNBLOCK`
 * (from the store's command connection); `blockMs` bounds the wait if that is lost.
 * Connection errors are retried (ioredis reconnects); the tails' own poll covers the gap.
 */
export class RedisStreamReader {
  private readonly watched = new Map<string, Watched>();
  private client: Redis | undefined;
  private clientId: string | undefined;
  private running = false;
  private blocked = false;
  /** Counts the XREADs sent: an interrupt aims at the one that was blocking when it was asked for. */
  private generation = 0;
  private closed = false;

  /**
   * @param connect opens the dedicated connection (called once, on the first watch).
   * @param unblock sends `CLIENT UNBLOCK <id>` on another connection.
   */
  constructor(
    private readonly connect: () => Promise<Redis>,
    private readonly unblock: (clientId: string) => Promise<unknown>,
    private readonly blockMs = 5_000,
  ) {}

  /**
   * Calls `wake` whenever the stream `key` gets entries past `cursor` (an id the caller read the
   * stream up to; ignored when the stream is already watched, whose cursor is no later). Returns
   * the function that stops watching.
   */
  watch(key: string, cursor: string, wake: () => void): () => void {
    let w = this.watched.get(key);
    if (!w) {
      w = { cursor, wakes: new Set() };
      this.watched.set(key, w);
      this.interrupt();
    }
    const entry = w;
    const own = (): void => wake(); // a distinct function per watch, so one wake may watch twice
    entry.wakes.add(own);
    this.start();
    return () => {
      entry.wakes.delete(own);
      if (entry.wakes.size === 0 && this.watched.get(key) === entry) this.watched.delete(key);
    };
  }

  /** The stream was deleted (it may start over from `1-0`): watch it from the start again. */
  reset(key: string): void {
    const w = this.watched.get(key);
    if (w) w.cursor = '0-0';
  }

  /** Stops the loop and closes the connection. */
  async close(): Promise<void> {
    this.closed = true;
    this.watched.clear();
    const client = this.client;
    this.client = undefined;
    if (client) client.disconnect();
  }

  /**
   * Unblocks the XREAD in progress so the next one includes a new stream. The UNBLOCK travels on
   * another connection and may reach Redis before the XREAD does (then it unblocks nothing): it is
   * retried until it hits or that XREAD has returned anyway.
   */
  private interrupt(): void {
    if (!this.blocked) return; // the next XREAD takes the new stream in
    const target = this.generation;
    void (async () => {
      for (let attempt = 0; attempt < 200 && this.blocked && this.generation === target && this.clientId !== undefined; attempt++) {
        if (Number(await this.unblock(this.clientId)) > 0) return;
        await new Promise<void>((resolve) => setTimeout(resolve, 5).unref());
      }
    })().catch(() => undefined);
  }

  private start(): void {
    if (this.running || this.closed) return;
    this.running = true;
    void this.loop().finally(() => {
      this.running = false;
      // A watch added as the loop was ending.
      if (this.watched.size > 0 && !this.closed) this.start();
    });
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.closed && this.watched.size > 0) {
      try {
        if (!this.client) {
          const client = await this.connect();
          if (this.closed) {
            client.disconnect();
            return;
          }
          this.client = client;
        }
        this.clientId ??= String(await this.client.client('ID'));
        if (this.closed || this.watched.size === 0) return;
        // From here to the XREAD's send nothing awaits: a watch added later sees it blocked and interrupts it.
        const keys = [...this.watched.keys()];
        const ids = keys.map((k) => this.watched.get(k)!.cursor);
        this.generation++;
        this.blocked = true;
        const res = (await this.client.xread('COUNT', 1000, 'BLOCK', this.blockMs, 'STREAMS', ...keys, ...ids)) as [string, [string, string[]][]][] | null;
        this.blocked = false;
        failures = 0;
        for (const [key, entries] of res ?? []) {
          const w = this.watched.get(key);
          if (!w || entries.length === 0) continue;
          w.cursor = entries[entries.length - 1]![0];
          for (const wake of [...w.wakes]) wake();
        }
      } catch {
        this.blocked = false;
        this.clientId = undefined; // a reconnect gives the connection a new id
        if (this.closed) return;
        failures++;
        await new Promise<void>((resolve) => setTimeout(resolve, Math.min(50 * 2 ** failures, 2_000)).unref());
      }
    }
  }
}
