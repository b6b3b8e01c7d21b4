import 'reflect-metadata';
// What agentrx loads at first use (axios at the first request, class-validator's whole index with
// the first DTO schema) is loaded here, before any test runs: jest's module loader is many times
// slower than Node's, and on a busy machine the first test of a file would pay it under its
// timeout. That the package itself loads them lazily is checked where Node loads it: the packed
// package (test/package) and test/core/http/axios-at-first-use.spec.ts (its own loader's state).
import 'axios';
import 'class-validator-jsonschema';
