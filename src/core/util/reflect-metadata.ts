import { createRequire } from 'node:module';

/**
 * The one place agentrx loads the Reflect metadata API (the decorators and the DI container
 * need it), and the build points inversify's own `import 'reflect-metadata/lite'` here too.
 * It is reflect-metadata's `lite` build (the same API without the Map/Set/WeakMap polyfills
 * Node has no use for), taken by `require`: a CommonJS package imported from an ES module costs
 * Node a lexer pass over its source, twice the load. A host that imports `reflect-metadata`
 * itself (NestJS does) shares the one metadata registry: both builds keep it on `Reflect` under
 * `Symbol.for('@reflect-metadata:registry')`.
 */
createRequire(import.meta.url)('reflect-metadata/lite');
