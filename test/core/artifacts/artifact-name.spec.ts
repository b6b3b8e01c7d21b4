import { checkArtifactName, MAX_ARTIFACT_NAME } from '../../../src/core/artifacts/artifact-name.js';
import { isAgentRxError } from '../../../src/core/errors.js';

function refusal(name: unknown, rule?: 'any' | 'portable'): unknown {
  try {
    checkArtifactName(name, rule);
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('checkArtifactName', () => {
  describe('when called with a plain file name', () => {
    it('should return it under both rules', () => {
      for (const name of ['report.txt', 'a', '.hidden', 'x..y', 'A-Z_0.9']) {
        expect(checkArtifactName(name)).toBe(name);
        expect(checkArtifactName(name, 'portable')).toBe(name);
      }
    });

    it('should accept other characters only under the any rule', () => {
      expect(checkArtifactName('résumé final.pdf')).toBe('résumé final.pdf');
      expect(isAgentRxError(refusal('résumé final.pdf', 'portable'), 'invalid_name')).toBe(true);
      expect(isAgentRxError(refusal("it's", 'portable'), 'invalid_name')).toBe(true);
    });
  });

  describe('when called with an unsafe name', () => {
    it('should throw invalid_name saying why', () => {
      const cases: [unknown, RegExp][] = [
        ['', /non-empty/],
        [undefined, /non-empty/],
        ['.', /folders/],
        ['..', /folders/],
        ['a/b', /without "\/"/],
        ['a\\b', /without/],
        ['nul\u0000', /control/],
        ['line\nbreak', /control/],
        ['x'.repeat(MAX_ARTIFACT_NAME + 1), /at most 255 bytes/],
      ];
      for (const [name, why] of cases) {
        const e = refusal(name);
        expect(isAgentRxError(e, 'invalid_name')).toBe(true);
        expect((e as Error).message).toMatch(why);
      }
    });
  });
});
