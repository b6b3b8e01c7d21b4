import { AGENTCORE_NAME_MAX, agentCoreNameOf, isAgentCoreNameOf } from '../../../../src/plugins/providers/bedrock-agentcore/agentcore-names.js';

const DIGEST = '0f1e2d3c'.repeat(8);
const POLICY = /^[A-Za-z][A-Za-z0-9_]{0,39}$/;

describe('agentCoreNameOf', () => {
  describe('when the base fits', () => {
    it('should be <prefix>_<base>_<digest8>', () => {
      expect(agentCoreNameOf('agentrx', 'helper', DIGEST)).toBe('agentrx_helper_0f1e2d3c');
    });
  });

  describe('when the base has characters outside [A-Za-z0-9_]', () => {
    it('should replace each character (multibyte ones too) by one underscore', () => {
      expect(agentCoreNameOf('agentrx', 'demo-agent', DIGEST)).toBe('agentrx_demo_agent_0f1e2d3c');
      expect(agentCoreNameOf('agentrx', 'café😀', DIGEST)).toBe('agentrx_caf___0f1e2d3c');
      expect(agentCoreNameOf('agentrx', '', DIGEST)).toBe('agentrx_0f1e2d3c');
    });
  });

  describe('when the base is too long', () => {
    it('should cut it, append a short hash of the whole base, keep the digest8 whole and fit the policy', () => {
      for (const prefix of ['a', 'agentrx', 'P'.repeat(20)]) {
        for (const base of ['x'.repeat(60), 'ü'.repeat(60), 'support-agent-for-the-billing-department-eu']) {
          const name = agentCoreNameOf(prefix, base, DIGEST);
          expect(name).toMatch(POLICY);
          expect(name.length).toBeLessThanOrEqual(AGENTCORE_NAME_MAX);
          expect(name.endsWith('_0f1e2d3c')).toBe(true);
          expect(name.startsWith(`${prefix}_`)).toBe(true);
          expect(isAgentCoreNameOf(name, prefix, base)).toBe(true);
        }
      }
      const a = agentCoreNameOf('agentrx', `${'x'.repeat(60)}a`, DIGEST);
      const b = agentCoreNameOf('agentrx', `${'x'.repeat(60)}b`, DIGEST);
      expect(a).not.toBe(b);
      expect(a.slice(0, -8)).not.toBe(b.slice(0, -8));
    });
  });

  describe('when the prefix breaks the policy', () => {
    it('should refuse it with invalid_config (the leading letter comes from the prefix)', () => {
      expect(() => agentCoreNameOf('9lives', 'x', DIGEST)).toThrow(expect.objectContaining({ code: 'invalid_config' }));
      expect(() => agentCoreNameOf('', 'x', DIGEST)).toThrow(expect.objectContaining({ code: 'invalid_config' }));
    });
  });

  describe('isAgentCoreNameOf', () => {
    it('should recognize exactly the versions of a base', () => {
      expect(isAgentCoreNameOf('agentrx_helper_0123abcd', 'agentrx', 'helper')).toBe(true);
      expect(isAgentCoreNameOf('agentrx_helper_x_0123abcd', 'agentrx', 'helper')).toBe(false);
      expect(isAgentCoreNameOf('other_helper_0123abcd', 'agentrx', 'helper')).toBe(false);
    });
  });
});
