import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', '.build/**', 'node_modules/**', 'coverage/**', '.bench-build/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', URL: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: [{ group: ['rxjs/internal/*'], message: 'Use the public rxjs entry points.' }] }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/core/util/inversify.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [{ name: 'inversify', message: 'Import inversify through src/core/util/inversify.ts only.' }], patterns: [{ group: ['rxjs/internal/*'] }] }] },
  },
  {
    files: ['src/core/**/*.ts'],
    ignores: ['src/core/util/inversify.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [{ name: 'inversify', message: 'Import inversify through src/core/util/inversify.ts only.' }], patterns: [{ group: ['**/plugins/**', '**/consumers/**', '**/cli/**', '**/nest/**', '**/testing/**', '**/distributed/**', '**/servers/**'], message: 'core depends on nothing outside core.' }, { group: ['rxjs/internal/*'] }] }] },
  },
);
