import { join } from 'node:path';
import { storeLocation } from '../../src/cli/state-dir.js';

describe('storeLocation', () => {
  const cwd = '/work/here';
  const env = { AGENTRX_STATE_DIR: '/state/rx', XDG_STATE_HOME: '/xdg/state', HOME: '/home/ada' };

  describe('when --store is given', () => {
    it('should win over the environment, taken from cwd when relative', () => {
      expect(storeLocation('rel/dir', env, cwd)).toEqual({ dir: join(cwd, 'rel/dir'), from: '--store' });
    });
  });

  describe('when only the environment says', () => {
    it('should take AGENTRX_STATE_DIR, then XDG_STATE_HOME/agentrx, then HOME/.local/state/agentrx', () => {
      expect(storeLocation(undefined, env, cwd)).toEqual({ dir: '/state/rx', from: 'AGENTRX_STATE_DIR' });
      expect(storeLocation(undefined, { ...env, AGENTRX_STATE_DIR: '' }, cwd)).toEqual({ dir: join('/xdg/state', 'agentrx'), from: 'XDG_STATE_HOME' });
      expect(storeLocation(undefined, { HOME: '/home/ada' }, cwd)).toEqual({ dir: join('/home/ada', '.local', 'state', 'agentrx'), from: 'HOME' });
      expect(storeLocation(undefined, { USERPROFILE: 'C:/Users/ada' }, cwd)?.from).toBe('HOME');
    });
  });

  describe('when nothing is set', () => {
    it('should return undefined', () => {
      expect(storeLocation(undefined, {}, cwd)).toBeUndefined();
    });
  });
});
