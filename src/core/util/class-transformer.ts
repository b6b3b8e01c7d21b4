import { createRequire } from 'node:module';
import type * as CT from 'class-transformer';
import './reflect-metadata.js';

/**
 * The one place the sources take class-transformer's runtime from, by `require`: it is a
 * CommonJS package, and one imported from an ES module costs Node a lexer pass over its source
 * (twice the load). The Reflect metadata API its decorators read loads first. It is the module a
 * host's `import { Type } from 'class-transformer'` gets (one module cache), so decorators
 * registered there and here share one metadata storage.
 */
const ct = createRequire(import.meta.url)('class-transformer') as typeof CT;

export const { plainToInstance, Transform, Type } = ct;
