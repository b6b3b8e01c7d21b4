import type { RawEvent } from '../../../src/core/model.js';
import { missedSince, type IngestCursor } from '../../../src/core/plugin/agent-provider.js';

const cursorOf = (ids: readonly string[], ingested = ids.length): IngestCursor => ({ ingested, has: (id) => ids.includes(id) });
const history = (...ids: string[]): RawEvent[] => ids.map((id) => ({ type: 'x', id }));
const idsOf = (events: readonly RawEvent[]): unknown[] => events.map((e) => e['id']);

describe('missedSince', () => {
  it('should return every event with an id when nothing was ingested', () => {
    expect(idsOf(missedSince([...history('a', 'b'), { type: 'no-id' }], cursorOf([])))).toEqual(['a', 'b']);
  });

  it('should return only the events after the newest one the cursor knows', () => {
    // The window has forgotten a and b: they still count as ingested because c comes after them.
    expect(idsOf(missedSince(history('a', 'b', 'c', 'd', 'e'), cursorOf(['c'], 3)))).toEqual(['d', 'e']);
  });

  it('should skip events after the anchor that the window already holds (live events that overtook history)', () => {
    expect(idsOf(missedSince(history('a', 'b', 'c', 'd'), cursorOf(['a', 'c', 'b'])))).toEqual(['d']);
  });

  it('should return nothing when the newest listed event was ingested', () => {
    expect(missedSince(history('a', 'b'), cursorOf(['b'], 2))).toEqual([]);
  });

  it('should use a custom id function', () => {
    const h: RawEvent[] = [{ key: 'a' }, { key: 'b' }];
    expect(missedSince(h, cursorOf(['a']), (e) => e['key'] as string)).toEqual([{ key: 'b' }]);
  });

  it('should fail with a non-retryable provider_error when events were ingested but none is listed', () => {
    expect(() => missedSince(history('a', 'b'), cursorOf(['z'], 5))).toThrow(
      expect.objectContaining({ code: 'provider_error', message: expect.stringContaining('limits.dedupeWindow'), details: { retryable: false } }),
    );
  });
});
