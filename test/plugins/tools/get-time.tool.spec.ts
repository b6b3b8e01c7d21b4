import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import type { ToolContext } from '../../../src/core/plugin/tool-handler.js';
import { GetTimeInput, GetTimeToolHandler } from '../../../src/plugins/tools/get-time.tool.js';
import type { Clock } from '../../../src/plugins/tools/tools.config.js';

const FIXED = new Date('2024-03-10T14:30:00.123Z');

/** A clock stopped at `at`. */
function fixedClock(at: Date = FIXED): Clock {
  return { now: () => new Date(at.getTime()) };
}

function contextWith(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { toolUseId: 'toolu_1', sessionId: 'sess_1', idempotencyKey: 'sess_1:toolu_1', signal, deadline: Date.now() + 60_000 };
}

describe('GetTimeToolHandler', () => {
  describe('.handle', () => {
    describe('when called with a time zone, and the clock is fixed', () => {
      it.each([
        ['UTC', 'UTC', '2024-03-10T14:30:00.123+00:00'],
        ['America/New_York', 'America/New_York', '2024-03-10T10:30:00.123-04:00'],
        ['Asia/Kolkata', 'Asia/Kolkata', '2024-03-10T20:00:00.123+05:30'],
        ['America/St_Johns', 'America/St_Johns', '2024-03-10T12:00:00.123-02:30'],
        ['Pacific/Kiritimati', 'Pacific/Kiritimati', '2024-03-11T04:30:00.123+14:00'],
        ['europe/paris', 'Europe/Paris', '2024-03-10T15:30:00.123+01:00'],
      ])('should report %s as zone %s at %s', (timeZone, canonical, iso) => {
        const result = new GetTimeToolHandler(fixedClock()).handle({ timeZone }, contextWith());
        expect(result.timeZone).toBe(canonical);
        expect(result.iso).toBe(iso);
        expect(Date.parse(result.iso)).toBe(FIXED.getTime());
        expect(Object.keys(result).sort()).toEqual(['formatted', 'iso', 'timeZone']);
      });

      it('should format the date for people', () => {
        const result = new GetTimeToolHandler(fixedClock()).handle({ timeZone: 'America/New_York' }, contextWith());
        expect(result.formatted).toMatch(/^Sunday, March 10, 2024 at 10:30:00\sAM EDT$/);
      });
    });

    describe('when called around midnight, and the clock is fixed', () => {
      it('should report hour 00 rather than 24', () => {
        const result = new GetTimeToolHandler(fixedClock(new Date('2024-01-01T00:05:09.000Z'))).handle({ timeZone: 'UTC' }, contextWith());
        expect(result.iso).toBe('2024-01-01T00:05:09.000+00:00');
      });
    });

    describe('when called without a time zone', () => {
      it('should use the process time zone', () => {
        const result = new GetTimeToolHandler(fixedClock()).handle({}, contextWith());
        expect(result.timeZone).toBe(new Intl.DateTimeFormat().resolvedOptions().timeZone);
        expect(Date.parse(result.iso)).toBe(FIXED.getTime());
      });
    });

    describe('when called with an unknown time zone', () => {
      it('should throw an error naming the zone', () => {
        expect(() => new GetTimeToolHandler(fixedClock()).handle({ timeZone: 'Mars/Olympus_Mons' }, contextWith())).toThrow(
          "unknown time zone 'Mars/Olympus_Mons'",
        );
      });
    });

    describe('when called, and the clock returns an invalid date', () => {
      it('should throw instead of returning garbage', () => {
        const broken: Clock = { now: () => new Date(Number.NaN) };
        expect(() => new GetTimeToolHandler(broken).handle({ timeZone: 'UTC' }, contextWith())).toThrow('invalid date');
      });
    });

    describe('when called, and the signal is already aborted', () => {
      it('should throw the abort reason', () => {
        const controller = new AbortController();
        const reason = new Error('cancelled by test');
        controller.abort(reason);
        expect(() => new GetTimeToolHandler(fixedClock()).handle({}, contextWith(controller.signal))).toThrow(reason);
      });
    });

    describe('when called twice, and the clock moves', () => {
      it('should read the clock on every call', () => {
        let now = FIXED.getTime();
        const ticking: Clock = { now: () => new Date((now += 1000)) };
        const handler = new GetTimeToolHandler(ticking);
        const first = handler.handle({ timeZone: 'UTC' }, contextWith());
        const second = handler.handle({ timeZone: 'UTC' }, contextWith());
        expect(Date.parse(second.iso) - Date.parse(first.iso)).toBe(1000);
      });
    });
  });

  describe('.name', () => {
    it('should be get_time and use GetTimeInput', () => {
      const handler = new GetTimeToolHandler(fixedClock());
      expect(handler.name).toBe('get_time');
      expect(handler.inputType).toBe(GetTimeInput);
    });
  });
});

describe('GetTimeInput', () => {
  describe('when validated', () => {
    it.each([
      ['an unknown zone', { timeZone: 'Mars/Olympus_Mons' }],
      ['a number', { timeZone: 5 }],
      ['an empty string', { timeZone: '' }],
    ])('should reject %s', (_case, input) => {
      const errors = validateSync(plainToInstance(GetTimeInput, input));
      expect(errors.map((e) => e.property)).toEqual(['timeZone']);
      expect(Object.keys(errors[0]!.constraints ?? {})).toContain('isTimeZone');
    });

    it.each([[{}], [{ timeZone: 'Europe/Paris' }], [{ timeZone: 'UTC' }]])('should accept %j', (input) => {
      expect(validateSync(plainToInstance(GetTimeInput, input))).toEqual([]);
    });
  });
});
