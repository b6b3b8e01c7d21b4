import { backoffDelay, DEFAULT_BACKOFF_MAX_MS } from '../../../src/core/util/backoff.js';

describe('backoffDelay', () => {
  describe('when called with random at its extremes', () => {
    it('should double the window per retry and keep each delay in its upper half', () => {
      const lows = [1, 2, 3, 4, 5].map((n) => backoffDelay(n, { baseMs: 100, random: () => 0 }));
      const highs = [1, 2, 3, 4, 5].map((n) => backoffDelay(n, { baseMs: 100, random: () => 0.999_999 }));
      expect(lows).toEqual([50, 100, 200, 400, 800]);
      expect(highs).toEqual([100, 200, 400, 800, 1600]);
    });
  });

  describe('when called with a mid-range random', () => {
    it('should put the delay at three quarters of the window', () => {
      expect(backoffDelay(1, { baseMs: 100, random: () => 0.5 })).toBe(75);
      expect(backoffDelay(3, { baseMs: 100, random: () => 0.5 })).toBe(300);
    });
  });

  describe('when the exponential window passes the cap', () => {
    it('should cap the window at maxMs, default 30 s', () => {
      expect(DEFAULT_BACKOFF_MAX_MS).toBe(30_000);
      expect(backoffDelay(20, { baseMs: 250, random: () => 0 })).toBe(15_000);
      expect(backoffDelay(20, { baseMs: 250, random: () => 1 })).toBe(30_000);
      expect(backoffDelay(10, { baseMs: 100, maxMs: 1000, random: () => 0.5 })).toBe(750);
      expect(backoffDelay(10_000, { baseMs: 100, maxMs: 1000, random: () => 0 })).toBe(500);
    });
  });

  describe('when called with out-of-range inputs', () => {
    it('should treat a retry below 1 as the first, clamp random and give 0 for an empty window', () => {
      expect(backoffDelay(0, { baseMs: 100, random: () => 0 })).toBe(50);
      expect(backoffDelay(-3, { baseMs: 100, random: () => 0 })).toBe(50);
      expect(backoffDelay(Number.NaN, { baseMs: 100, random: () => 0 })).toBe(50);
      expect(backoffDelay(1, { baseMs: 100, random: () => 7 })).toBe(100);
      expect(backoffDelay(1, { baseMs: 100, random: () => -1 })).toBe(50);
      expect(backoffDelay(4, { baseMs: 0, random: () => 0.5 })).toBe(0);
      expect(backoffDelay(4, { baseMs: -10, random: () => 0.5 })).toBe(0);
      expect(backoffDelay(4, { baseMs: Number.NaN, random: () => 0.5 })).toBe(0);
    });
  });

  describe('when no random is injected', () => {
    it('should stay within [cap / 2, cap] for many draws', () => {
      for (let i = 0; i < 200; i++) {
        const d = backoffDelay(3, { baseMs: 100 });
        expect(d).toBeGreaterThanOrEqual(200);
        expect(d).toBeLessThanOrEqual(400);
      }
    });
  });
});
