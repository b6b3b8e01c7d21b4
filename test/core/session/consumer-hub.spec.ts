import { Subject } from 'rxjs';
import { ConsumerHub, type ConsumerError } from '../../../src/core/session/consumer-hub.js';
import type { AgUiEvent } from '../../../src/core/events/agui-event.js';
import type { EventConsumer, StopReason } from '../../../src/core/plugin/event-consumer.js';
import { RecordingConsumer } from '../../../src/testing/recording-consumer.js';

const run: AgUiEvent[] = [
  { type: 'RUN_STARTED', threadId: 't', runId: 'r' },
  { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'hi' },
  { type: 'TEXT_MESSAGE_END', messageId: 'm' },
  { type: 'RUN_FINISHED', threadId: 't', runId: 'r' },
];

const opts = { handlerTimeoutMs: 1000, queueLimit: 100, stopTimeoutMs: 1000 };

describe('ConsumerHub', () => {
  describe('.attach', () => {
    describe('when a consumer has a slow start', () => {
      it('should await start and buffer the events that arrive meanwhile', async () => {
        let releaseStart!: () => void;
        const calls: string[] = [];
        const slow: EventConsumer = {
          id: 'slow',
          start: () => new Promise<void>((r) => (releaseStart = () => { calls.push('start'); r(); })),
          onEvent: (e) => void calls.push(e.type),
          stop: (reason) => void calls.push(`stop:${reason}`),
        };
        const src = new Subject<AgUiEvent>();
        const att = new ConsumerHub([slow], opts, new Subject()).attach(src, () => 's');
        run.forEach((e) => src.next(e));
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
        const src = new Subject<AgUiEvent>();
        new ConsumerHub([plain, sync], { ...opts, queueLimit: 2 }, errors$).attach(src, () => 's');
        run.forEach((e) => src.next(e));
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
        const broken: EventConsumer = { id: 'broken', start: () => { throw new Error('no disk'); }, onEvent: () => { throw new Error('should not be called'); }, stop: (r) => void stops.push(r) };
        const ok = new RecordingConsumer('ok');
        const src = new Subject<AgUiEvent>();
        const att = new ConsumerHub([broken, ok], opts, errors$).attach(src, () => 's');
        run.forEach((e) => src.next(e));
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
        const src = new Subject<AgUiEvent>();
        const att = new ConsumerHub([stuck, ok], { ...opts, queueLimit: 3 }, errors$).attach(src, () => 's');
        for (const e of run) {
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
        const src = new Subject<AgUiEvent>();
        const att = new ConsumerHub([rec], opts, new Subject()).attach(src, () => 's');
        src.next(run[0]!);
        await Promise.all([att.close('cancelled'), att.close('completed')]);
        expect(rec.stops).toEqual(['cancelled']);
      });
    });

    describe('when contexts are built', () => {
      it('should give gap-free seq and the run ids', async () => {
        const rec = new RecordingConsumer();
        const src = new Subject<AgUiEvent>();
        const att = new ConsumerHub([rec], opts, new Subject()).attach(src, () => 'sess');
        run.forEach((e) => src.next(e));
        await att.close('completed');
        expect(rec.contexts.map((c) => c.seq)).toEqual([1, 2, 3, 4, 5]);
        expect(rec.contexts[2]).toMatchObject({ sessionId: 'sess', threadId: 't', runId: 'r' });
      });
    });
  });
});
