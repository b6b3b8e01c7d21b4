/** Jest in ESM mode (inversify 8 is ESM-only): run with NODE_OPTIONS=--experimental-vm-modules. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  setupFiles: ['<rootDir>/test/setup.ts'],
  // One line per system program the machine lacks (its suites then skip silently).
  globalSetup: '<rootDir>/test/global-setup.mjs',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  // `agentrx` and `agentrx/testing` as a user imports them (the README examples in test/support/readme).
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1', '^agentrx$': '<rootDir>/src/index.ts', '^agentrx/testing$': '<rootDir>/src/testing/index.ts' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: false }],
  },
  testTimeout: 15000,
};
