import { lastValueFrom, toArray, type Observable } from 'rxjs';
import type { SessionEvent } from '../../src/core/events/session-event.js';
import { MemorySessionStore } from '../../src/core/store/memory/memory-session-store.js';
import type { StreamEntry } from '../../src/distributed/distributed-keys.js';
import { MESSAGE_FIELD, type InputMessage, type OutputMessage } from '../../src/distributed/distributed-messages.js';
import { RemoteSession } from '../../src/distributed/remote-session.js';

const SESSION = 'sess-1';

/** The log of one short run: run_started, a text delta, run_finished (seq 1–3). */
function run(runId: string, from: number, text: string): SessionEvent[] {
  const at = (seq: number): Pick<SessionEvent, 'seq' | 'sessionId' | 'turn' | 'provider' | 'at'> => ({
    seq,
    sessionId: SESSION,
    turn: 1,
    provider: 'fake',
    at: 1_000 + seq,
  });
  return [
    { ...at(from), source: 'agentrx', raw: { type: 'agentrx.run_started', runId, threadId: 't', resumed: false } },
    { ...at(from + 1), source: 'agentrx', raw: { type: 'agentrx.text_delta', text, messageId: `m-${runId}` } },
    {
      ...at(from + 2),
      source: 'agentrx',
      raw: {
        type: 'agentrx.run_finished',
        runId,
        threadId: 't',
        terminal: 'end_turn',
        stopReason: 'end_turn',
        turns: 1,
        usage: { inputTokens: 1, outputTokens: 1 },
      },
    },
  ];
}

/**
 * A RemoteSession on fakes of its Redis streams: the test publishes what the owner worker would on
 * the output stream, and records what the handle sends on the input stream. The store is a real
 * MemorySessionStore, wrapped to count the reads of the log.
 */
class Harness {
  readonly store = new MemorySessionStore();
  readonly sent: InputMessage[] = [];
  tails = 0;
  following = 0;
  private deliver: ((entries: readonly StreamEntry[]) => void) | undefined;
  private outputs = 0;

  handle(afterSeq = 0): RemoteSession {
    const store = this.store;
    const counted = Object.assign(Object.create(store) as MemorySessionStore, {
      tail: (sessionId: string, after: number): Observable<SessionEvent> => {
        this.tails++;
        return store.tail(sessionId, after);
      },
    });
    return new RemoteSession(
      'sub-1',
      {
        store: counted,
        keys: { inputs: 'in', outputs: 'out', state: 'state', holders: 'holders' },
        follow: (_key, _after, onEntries) => {
          this.following++;
          this.deliver = onEntries;
          return async () => {
            this.following--;
            this.deliver = undefined;
          };
        },
        send: async (_key, message) => {
          this.sent.push(message);
          return `${this.sent.length}-0`;
        },
      },
      afterSeq,
    );
  }

  /** Publishes an output message, as the owner worker does. */
  publish(m: OutputMessage): void {
    this.deliver?.([[`${++this.outputs}-0`, [MESSAGE_FIELD, JSON.stringify(m)]]]);
  }
}

describe('RemoteSession', () => {
  let h: Harness;
  beforeEach(() => {
    h = new Harness();
  });

  describe('.events$ and .agui$', () => {
    describe('when both are subscribed together', () => {
      it("should read the log once and give each envelope's AG-UI events before the envelope", async () => {
        await h.store.append(SESSION, run('r1', 1, 'hello'));
        const handle = h.handle();
        const order: string[] = [];
        const agui = collect(handle.agui$, (ev) => order.push(ev.type));
        const events = collect(handle.events$, (env) => order.push(`env ${env.seq}`));
        h.publish({ kind: 'opened', sessionId: SESSION });
        h.publish({ kind: 'closed', lastSeq: 3 });

        expect((await events).map((e) => e.seq)).toEqual([1, 2, 3]);
        expect((await agui).map((e) => e.type)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']);
        expect(order).toEqual(['RUN_STARTED', 'env 1', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'env 2', 'TEXT_MESSAGE_END', 'RUN_FINISHED', 'env 3']);
        expect(h.tails).toBe(1);
      });
    });

    describe('when one subscribes after the other has read the log', () => {
      it('should give the late one a read of its own, from the start', async () => {
        await h.store.append(SESSION, run('r1', 1, 'hello'));
        const handle = h.handle();
        h.publish({ kind: 'opened', sessionId: SESSION });
        h.publish({ kind: 'closed', lastSeq: 3 });
        const first = await lastValueFrom(handle.events$.pipe(toArray()));
        const late = await lastValueFrom(handle.agui$.pipe(toArray()));

        expect(first.map((e) => e.seq)).toEqual([1, 2, 3]);
        expect(late.map((e) => e.type).at(-1)).toBe('RUN_FINISHED');
        expect(h.tails).toBe(2);
      });
    });

    describe('when the handle starts after a seq inside a run', () => {
      it("should emit only what follows, translated from the run's start", async () => {
        await h.store.append(SESSION, run('r1', 1, 'hello'));
        const handle = h.handle(1);
        const agui = lastValueFrom(handle.agui$.pipe(toArray()));
        const events = lastValueFrom(handle.events$.pipe(toArray()));
        h.publish({ kind: 'opened', sessionId: SESSION });
        h.publish({ kind: 'closed', lastSeq: 3 });

        expect((await events).map((e) => e.seq)).toEqual([2, 3]);
        expect((await agui).map((e) => e.type)).toEqual(['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']);
      });
    });
  });

  describe('.setState', () => {
    it('should send the state on the input stream, after what was sent before', async () => {
      const handle = h.handle();
      await handle.message('one');
      await handle.setState({ count: 2 });
      expect(h.sent).toEqual([
        { kind: 'message', text: 'one' },
        { kind: 'state', state: { count: 2 } },
      ]);
    });

    it('should refuse a state that is not an object, and any state once the session closed', async () => {
      const handle = h.handle();
      await expect(handle.setState([] as unknown as Record<string, unknown>)).rejects.toMatchObject({ code: 'invalid_options' });
      h.publish({ kind: 'closed', lastSeq: 0 });
      await expect(handle.setState({ a: 1 })).rejects.toMatchObject({ code: 'session_closed' });
      expect(h.sent).toEqual([]);
    });
  });

  describe('.answerClient', () => {
    describe('when the owner worker acknowledges the answer', () => {
      it('should send it on the input stream and resolve', async () => {
        const handle = h.handle();
        const answers = { toolResults: [{ toolUseId: 'call_ask', content: 'yes' }] };
        const answered = handle.answerClient(answers);
        await Promise.resolve();
        h.publish({ kind: 'ack', input: '1-0' });
        await expect(answered).resolves.toBeUndefined();
        expect(h.sent).toEqual([{ kind: 'answer', answers }]);
      });
    });

    describe('when the owner worker refuses the answer', () => {
      it("should reject with the worker's error", async () => {
        const handle = h.handle();
        const answered = handle.answerClient({ toolResults: [{ toolUseId: 'call_x', content: 'no' }] });
        await Promise.resolve();
        h.publish({ kind: 'ack', input: '1-0', error: { code: 'invalid_options', message: "no call waits for 'call_x'" } });
        await expect(answered).rejects.toMatchObject({ code: 'invalid_options', message: "no call waits for 'call_x'" });
      });
    });
  });

  describe('.release and .leave', () => {
    it.each(['release', 'leave'] as const)('%s should stop reading the output stream and send nothing', async (method) => {
      const handle = h.handle();
      expect(h.following).toBe(1);
      await handle[method]();
      expect(h.following).toBe(0);
      expect(h.sent).toEqual([]);
    });
  });
});

/** Subscribes to `source` now, calling `seen` for each value; resolves with every value once it completes. */
function collect<T>(source: Observable<T>, seen: (v: T) => void): Promise<T[]> {
  const values: T[] = [];
  return new Promise<T[]>((resolve, reject) => {
    source.subscribe({ next: (v) => (values.push(v), seen(v)), error: (e: unknown) => reject(e), complete: () => resolve(values) });
  });
}
