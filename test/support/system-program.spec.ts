import { jest } from '@jest/globals';
import { checkPrograms, requireProgram, type SystemProgram } from './system-program.js';

const PRESENT: SystemProgram = { path: process.execPath, install: 'apt-get install -y nodejs' };
const MISSING: SystemProgram = { path: '/nonexistent/agentrx-test-program', install: 'apt-get install -y agentrx-test-program' };

describe('checkPrograms', () => {
  describe('when every program is there', () => {
    it('should run, with or without CI', () => {
      expect(checkPrograms([PRESENT], {})).toEqual({ run: true, fail: false, message: '' });
      expect(checkPrograms([PRESENT], { CI: 'true' })).toEqual({ run: true, fail: false, message: '' });
    });
  });

  describe('when one is missing outside CI', () => {
    it('should skip with one line naming the program and how to install it', () => {
      const check = checkPrograms([PRESENT, MISSING], {});
      expect(check).toMatchObject({ run: false, fail: false });
      expect(check.message).toBe(
        '/nonexistent/agentrx-test-program is missing (install it: apt-get install -y agentrx-test-program); skipping the tests that need it (with CI=true this fails)',
      );
      expect(check.message).not.toContain('\n');
    });
  });

  describe('when one is missing under CI=true', () => {
    it('should fail, naming it', () => {
      const check = checkPrograms([MISSING], { CI: 'true' });
      expect(check).toMatchObject({ run: false, fail: true });
      expect(check.message).toBe('/nonexistent/agentrx-test-program is missing (install it: apt-get install -y agentrx-test-program); CI=true requires it');
    });
  });
});

describe('requireProgram', () => {
  describe('when the program is there', () => {
    it('should return true', () => {
      expect(requireProgram(PRESENT, { CI: 'true' })).toBe(true);
    });
  });

  describe('when it is missing', () => {
    it('should return false outside CI, after writing the line once', () => {
      const writes: string[] = [];
      const spy = jest.spyOn(process.stderr, 'write').mockImplementation(((chunk: unknown) => {
        writes.push(String(chunk));
        return true;
      }) as typeof process.stderr.write);
      try {
        expect(requireProgram(MISSING, {})).toBe(false);
        expect(requireProgram(MISSING, {})).toBe(false);
      } finally {
        spy.mockRestore();
      }
      expect(writes).toEqual([`${checkPrograms([MISSING], {}).message}\n`]);
    });

    it('should throw under CI=true', () => {
      expect(() => requireProgram(MISSING, { CI: 'true' })).toThrow('CI=true requires it');
    });
  });
});

describe("jest's global setup (test/global-setup.mjs)", () => {
  type Lines = (programs: Record<string, SystemProgram>, env: Record<string, string>, exists: (p: string) => boolean) => string[];
  const setup = async (): Promise<Lines> =>
    ((await import(new URL('../global-setup.mjs', import.meta.url).href)) as { missingProgramLines: Lines }).missingProgramLines;

  it('should print one line per missing program, whatever number of suites need it, and none when all are there', async () => {
    const lines = await setup();
    const programs = { present: PRESENT, missing: MISSING, also: { ...MISSING, path: '/nonexistent/other' } };
    expect(lines(programs, {}, (p) => p === PRESENT.path)).toEqual([
      '/nonexistent/agentrx-test-program is missing (install it: apt-get install -y agentrx-test-program); skipping the tests that need it (with CI=true this fails)',
      '/nonexistent/other is missing (install it: apt-get install -y agentrx-test-program); skipping the tests that need it (with CI=true this fails)',
    ]);
    expect(lines({ present: PRESENT }, {}, () => true)).toEqual([]);
    expect(lines({ missing: MISSING }, { CI: 'true' }, () => false)[0]).toContain('CI=true requires it');
  });
});
