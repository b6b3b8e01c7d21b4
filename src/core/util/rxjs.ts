import { createRequire } from 'node:module';
import type * as Rx from 'rxjs';

/**
 * The one place the sources take rxjs's runtime from: the files of its CommonJS build that
 * define what agentrx uses (about 60 modules), through the package's own `rxjs/internal/*`
 * export, instead of its index (about 220). They are the very modules the index re-exports, in
 * the same module cache: `Observable`, `Subject` and the rest are the host's classes, and
 * `instanceof`, `isObservable` and operators from `import { … } from 'rxjs'` work across both.
 * Only the public names are taken from here; types come from 'rxjs' itself.
 */
const load = createRequire(import.meta.url);
const part = (file: string): typeof Rx => load(`rxjs/internal/${file}`) as typeof Rx;

export const { Observable } = part('Observable');
export const { Subject } = part('Subject');
export const { ReplaySubject } = part('ReplaySubject');
export const { Subscription } = part('Subscription');
export const { config } = part('config');
export const { firstValueFrom } = part('firstValueFrom');
export const { EmptyError } = part('util/EmptyError');
export const { concat } = part('observable/concat');
export const { defer } = part('observable/defer');
export const { EMPTY } = part('observable/empty');
export const { from } = part('observable/from');
export const { of } = part('observable/of');
export const { filter } = part('operators/filter');
export const { map } = part('operators/map');
export const { share } = part('operators/share');
export const { switchMap } = part('operators/switchMap');

export type Observable<T> = Rx.Observable<T>;
export type Subject<T> = Rx.Subject<T>;
export type ReplaySubject<T> = Rx.ReplaySubject<T>;
export type Subscription = Rx.Subscription;
export type { MonoTypeOperatorFunction, OperatorFunction, Subscriber } from 'rxjs';
