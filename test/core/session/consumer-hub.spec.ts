import { Subject, type Observable } from 'rxjs';
import { ConsumerHub, type ConsumerError } from '../../../src/core/session/consumer-hub.js';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import { toAgUi } from '../../../src/core/events/operators/to-ag-ui.js';
import type { SessionEvent } from '../../../src/core/events/session-event.js';
import { withAgUi, type TranslatedEvent } from '../../../src/core/events/translated-event.js';
import type { EventConsumer, StopReason } from '../../../src/core/plugin/event-consumer.js';
import { RecordingConsumer } from '../../../src/testing/recording-consumer.js';
import { envelopes } from '../../consumers/feed-hub.js';

/** One run's envelopes: started, one text delta, finished. */
const session: SessionEvent[] = envelopes([
  { type: 'agentrx.run_started', runId: 'r', threadId: 't', resumed: false },
  { type: 'agentrx.text_delta', text: 'hi', messageId: 'm' },
  {
    type: 'agentrx.run_finished',
    runId: 'r',
    threadId: 't',
    terminal: 'end_turn',
    stopReason: 'end_turn',
    turns: 1,
    usage: { inputTokens: 1, outputTokens: 1 },
  },
]);

/** Their AG-UI translation: RUN_STARTED, TEXT_MESSAGE_START, _CONTENT, _END, RUN_FINISHED. */
const run: AgUiEvent[] = [];
const translator = new Subject<SessionEvent>();
translator.pipe(toAgUi()).subscribe((e) => run.push(e));
session.forEach((e) => translator.next(e));

/** The session's envelopes fed by hand, and the translated stream a hub attaches to. */
function source(): { src: Subject<SessionEvent>; translated$: Observable<TranslatedEvent> } {
  const src = new Subject<SessionEvent>();
  return { src, translated$: src.pipe(withAgUi()) };
}

const opts = { handlerTimeoutMs: 1000, queueLimit: 100, stopTimeoutMs: 1000 };

describe('ConsumerHub', () => {
  describe('.attach', () => {
    describe('when a consumer has a slow start', () => {
      it('should await start and buffer the events that arrive meanwhile', async () => {
        let releaseStart!: () => void;
        const calls: string[] = [];
        const slow: EventConsumer = {
          id: 'slow',
          start: () =>
            new Promise<void>(
              (r) =>
                (releaseStart = () => {
                  calls.push('start');
                  r();
                }),
            ),
          onEvent: (e) => void calls.push(e.type),
          stop: (reason) => void calls.push(`stop:${reason}`),
        };
        const { src, translated$ } = source();
        const att = new ConsumerHub([slow], opts, new Subject()).attach(translated$, () => 's');
        session.forEach((e) => src.next(e));
        await new Promise((r) => setImmediate(r));
        expect(calls).toEqual([]);
        releaseStart();
        await att.close('completed');
        expect(calls).toEqual(['start', ...run.map((e) => e.type), 'stop:completed']);
      });
    });

    describe('when a consumer has no start hook or a synchronous one', () => {
      it('should start it and deliver each event before next() returns, with no queue beyond the limit', () => {
        const calls: string[] = [];
        const plain: EventConsumer = { id: 'plain', onEvent: (e) => void calls.push(`plain:${e.type}`) };
        const sync: EventConsumer = { id: 'sync', start: () => void calls.push('sync:start'), onEvent: (e) => void calls.push(`sync:${e.type}`) };
        const errors: ConsumerError[] = [];
        const errors$ = new Subject<ConsumerError>();
        errors$.subscribe((e) => errors.push(e));
        const { src, translated$ } = source();
        new ConsumerHub([plain, sync], { ...opts, queueLimit: 2 }, errors$).attach(translated$, () => 's');
        session.forEach((e) => src.next(e));
        expect(calls).toEqual(['plain:RUN_STARTED', 'sync:start', 'sync:RUN_STARTED', ...run.slice(1).flatMap((e) => [`plain:${e.type}`, `sync:${e.type}`])]);
        expect(errors).toEqual([]);
      });
    });

    describe('when a consumer fails to start', () => {
      it('should report it, never deliver to it and never stop it', async () => {
        const errors: ConsumerError[] = [];
        const errors$ = new Subject<ConsumerError>();
        errors$.subscribe((e) => errors.push(e));
        const stops: StopReason[] = [];
        const broken: EventConsumer = {
          id: 'broken',
          start: () => {
            throw new Error('no disk');
          },
          onEvent: () => {
            throw new Error('should not be called');
          },
          stop: (r) => void stops.push(r),
        };
        const ok = new RecordingConsumer('ok');
        const { src, translated$ } = source();
        const att = new ConsumerHub([broken, ok], opts, errors$).attach(translated$, () => 's');
        session.forEach((e) => src.next(e));
        await att.close('error');
        expect(errors).toEqual([expect.objectContaining({ consumerId: 'broken', phase: 'start', message: expect.stringContaining('no disk') })]);
        expect(stops).toEqual([]);
        expect(ok.events).toEqual(run);
        expect(ok.stops).toEqual(['error']);
      });
    });

    describe('when a consumer falls behind past the queue limit', () => {
      it('should disable it for the session and report an overflow, leaving others intact', async () => {
        const errors: ConsumerError[] = [];
        const errors$ = new Subject<ConsumerError>();
        errors$.subscribe((e) => errors.push(e));
        let release!: () => void;
        const blocked = new Promise<void>((r) => (release = r));
        const stuck: EventConsumer = { id: 'stuck', onEvent: () => blocked };
        const ok = new RecordingConsumer('ok');
        const { src, translated$ } = source();
        const att = new ConsumerHub([stuck, ok], { ...opts, queueLimit: 3 }, errors$).attach(translated$, () => 's');
        for (const e of session) {
          src.next(e);
          // Let the healthy consumer catch up between events; the stuck one cannot.
          await new Promise((r) => setImmediate(r));
        }
        release();
        await att.close('completed');
        expect(errors).toEqual([expect.objectContaining({ consumerId: 'stuck', phase: 'overflow' })]);
        expect(ok.events).toEqual(run);
      });
    });

    describe('when close is called twice', () => {
      it('should stop each consumer once', async () => {
        const rec = new RecordingConsumer();
        const { src, translated$ } = source();
        const att = new ConsumerHub([rec], opts, new Subject()).attach(translated$, () => 's');
        src.next(session[0]!);
        await Promise.all([att.close('cancelled'), att.close('completed')]);
        expect(rec.stops).toEqual(['cancelled']);
      });
    });

    describe('when contexts are built', () => {
      it('should give gap-free seq and the run ids', async () => {
        const rec = new RecordingConsumer();
        const { src, translated$ } = source();
        const att = new ConsumerHub([rec], opts, new Subject()).attach(translated$, () => 'sess');
        session.forEach((e) => src.next(e));
        await att.close('completed');
        expect(rec.contexts.map((c) => c.seq)).toEqual([1, 2, 3, 4, 5]);
        expect(rec.contexts[2]).toMatchObject({ sessionId: 'sess', threadId: 't', runId: 'r' });
      });
    });
  });
});
