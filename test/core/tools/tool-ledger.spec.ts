import { ToolLedger } from '../../../src/core/tools/tool-ledger.js';

const result = (id: string) => ({ toolUseId: id, content: id, isError: false });

describe('ToolLedger', () => {
  describe('.begin', () => {
    it('should accept an id once', () => {
      const l = new ToolLedger();
      expect(l.begin('u1', 'echo')).toBe(true);
      expect(l.begin('u1', 'echo')).toBe(false);
      expect(l.get('u1')?.state).toBe('executing');
    });
  });

  describe('.record and .markPosted', () => {
    it('should move seen → executing → executed → posted', () => {
      const l = new ToolLedger();
      l.begin('u1', 'echo');
      l.record('u1', 'echo', result('u1'));
      expect(l.get('u1')).toEqual({ toolUseId: 'u1', name: 'echo', state: 'executed', result: result('u1') });
      l.markPosted(['u1', 'unknown']);
      expect(l.get('u1')?.state).toBe('posted');
      expect(l.get('unknown')).toBeUndefined();
    });

    it('should never overwrite a posted result', () => {
      const l = new ToolLedger();
      l.record('u1', 'echo', result('u1'));
      l.markPosted(['u1']);
      l.record('u1', 'echo', { toolUseId: 'u1', content: 'other', isError: true });
      expect(l.get('u1')?.result?.content).toBe('u1');
    });
  });

  describe('compaction', () => {
    describe('when more entries than the bound are held', () => {
      it('should drop the oldest posted entries and keep unposted ones', () => {
        const l = new ToolLedger([], 3);
        l.begin('running', 'x');
        for (const id of ['a', 'b', 'c', 'd']) {
          l.record(id, 'x', result(id));
          l.markPosted([id]);
        }
        expect(l.size).toBe(3);
        expect(l.get('running')?.state).toBe('executing');
        expect(l.get('a')).toBeUndefined();
        expect(l.get('d')?.state).toBe('posted');
      });
    });
  });
});
