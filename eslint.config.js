import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** class-validator's index loads ~320 modules: src takes what it uses from src/core/util/class-validator.ts. */
const classValidatorPaths = ['class-validator', 'class-validator-jsonschema'].map((name) => ({
  name,
  message: 'Import class-validator (and class-validator-jsonschema) through src/core/util/class-validator.ts only.',
}));
/** The same for rxjs's index (~220 modules): values from src/core/util/rxjs.ts, types from 'rxjs'. */
const rxjsPath = { name: 'rxjs', message: "Import rxjs's values through src/core/util/rxjs.ts only (types may come from 'rxjs').", allowTypeImports: true };
/**
 * CommonJS packages on the import path load by `require` from their one module (an ES import of
 * one costs Node a lexer pass over its source): class-transformer, reflect-metadata (its lite build).
 */
const requiredPaths = [
  { name: 'class-transformer', message: "Import class-transformer's values through src/core/util/class-transformer.ts only.", allowTypeImports: true },
  { name: 'reflect-metadata', message: "Import src/core/util/reflect-metadata.ts instead of 'reflect-metadata'." },
  { name: 'reflect-metadata/lite', message: "Import src/core/util/reflect-metadata.ts instead of 'reflect-metadata/lite'." },
];
/** The sources' import rules: the packages above and inversify through their one module each; `patterns` more. */
const srcImports = (patterns) => ({
  ignores: ['src/core/util/inversify.ts', 'src/core/util/class-validator.ts', 'src/core/util/rxjs.ts', 'src/core/util/class-transformer.ts'],
  rules: {
    'no-restricted-imports': 'off',
    '@typescript-eslint/no-restricted-imports': [
      'error',
      {
        paths: [{ name: 'inversify', message: 'Import inversify through src/core/util/inversify.ts only.' }, ...classValidatorPaths, rxjsPath, ...requiredPaths],
        patterns: [...patterns, { group: ['rxjs/internal/*'] }],
      },
    ],
  },
});

export default tseslint.config(
  { ignores: ['dist/**', '.build/**', 'node_modules/**', 'coverage/**', '.bench-build/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: [{ group: ['rxjs/internal/*'], message: 'Use the public rxjs entry points.' }] }],
    },
  },
  { files: ['src/**/*.ts'], ...srcImports([]) },
  {
    files: ['src/core/**/*.ts'],
    ...srcImports([
      {
        group: ['**/plugins/**', '**/consumers/**', '**/cli/**', '**/nest/**', '**/testing/**', '**/distributed/**', '**/servers/**'],
        message: 'core depends on nothing outside core.',
      },
    ]),
  },
);
