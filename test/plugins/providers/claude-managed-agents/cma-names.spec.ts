import { CMA_NAME_MAX, cmaNameOf, cutAtCharacter, isCmaNameOf, shortHash } from '../../../../src/plugins/providers/claude-managed-agents/cma-names.js';

const DIGEST = 'ab12cd34'.repeat(8);

describe('cmaNameOf', () => {
  describe('when the base fits', () => {
    it('should be <base>_<digest8>', () => {
      expect(cmaNameOf('support', DIGEST)).toBe('support_ab12cd34');
      expect(cmaNameOf('x'.repeat(CMA_NAME_MAX - 9), DIGEST)).toHaveLength(CMA_NAME_MAX);
    });
  });

  describe('when the base is too long', () => {
    it('should cut it, append a short hash of the whole base, and keep the digest8 whole', () => {
      const base = 'y'.repeat(400);
      const name = cmaNameOf(base, DIGEST);
      expect(name).toHaveLength(CMA_NAME_MAX);
      expect(name.endsWith(`_${shortHash(base)}_ab12cd34`)).toBe(true);
      // Two long bases that share the kept prefix still get distinct names.
      expect(cmaNameOf(`${base}a`, DIGEST)).not.toBe(cmaNameOf(`${base}b`, DIGEST));
    });

    it('should cut multibyte characters only at a character boundary', () => {
      for (const unit of ['é', '😀', 'e\u0301', '👩‍👩‍👧']) {
        const base = unit.repeat(300);
        const name = cmaNameOf(base, DIGEST);
        expect(name.length).toBeLessThanOrEqual(CMA_NAME_MAX);
        const kept = name.slice(0, name.length - 16);
        // Whole units only: no lone surrogate, no accent without its letter, no half family.
        expect(kept.length % unit.length).toBe(0);
        expect(kept).toBe(unit.repeat(kept.length / unit.length));
        expect(name.endsWith('_ab12cd34')).toBe(true);
        expect(Buffer.from(name, 'utf8').toString('utf8')).toBe(name);
      }
    });
  });

  describe('isCmaNameOf', () => {
    it('should recognize exactly the versions of a base', () => {
      expect(isCmaNameOf('support_0123abcd', 'support')).toBe(true);
      expect(isCmaNameOf('support_0123abcd_ffffffff', 'support')).toBe(false);
      expect(isCmaNameOf('support_0123abcd', 'support_0123abcd')).toBe(false);
      expect(isCmaNameOf('support_0123ABCD', 'support')).toBe(false);
      const long = 'z'.repeat(300);
      expect(isCmaNameOf(cmaNameOf(long, DIGEST), long)).toBe(true);
      expect(isCmaNameOf(cmaNameOf(long, DIGEST), `${long}z`)).toBe(false);
    });
  });

  describe('cutAtCharacter', () => {
    it('should never exceed the limit nor split a grapheme', () => {
      expect(cutAtCharacter('ab😀c', 3)).toBe('ab');
      expect(cutAtCharacter('ab😀c', 4)).toBe('ab😀');
      expect(cutAtCharacter('', 4)).toBe('');
    });
  });
});
