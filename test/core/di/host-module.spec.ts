import { IsString } from 'class-validator';
import type { ConfigSection } from '../../../src/core/config/index.js';
import { bindSection } from '../../../src/core/di/host-module.js';
import { Container, inject, injectable, optional } from '../../../src/core/util/inversify.js';

/** Valid with its defaults alone; counts how often its defaults were built. */
class Defaulted {
  static built = 0;
  mode = 'plain';

  constructor() {
    Defaulted.built++;
  }
}

/** Not valid without a `key`. */
class Keyed {
  @IsString()
  key!: string;
}

const DefaultedToken = Symbol('Defaulted');
const KeyedToken = Symbol('Keyed');
const defaulted: ConfigSection<Defaulted> = { key: 'defaulted', options: Defaulted, token: DefaultedToken, scope: 'root' };
const keyed: ConfigSection<Keyed> = { key: 'keyed', options: Keyed, token: KeyedToken };

@injectable()
class Reader {
  constructor(
    @inject(DefaultedToken) @optional() readonly defaulted?: Defaulted,
    @inject(KeyedToken) @optional() readonly keyed?: Keyed,
  ) {}
}

describe('host-module', () => {
  describe('.bindSection', () => {
    let container: Container;

    beforeEach(() => {
      container = new Container();
      container.bind(Reader).toSelf();
      Defaulted.built = 0;
    });

    describe('when the section was given', () => {
      it('should bind the validated instance as it is', () => {
        const given = Object.assign(new Keyed(), { key: 'k' });
        bindSection(container, keyed, given);
        expect(container.get(KeyedToken)).toBe(given);
        expect(container.get(Reader).keyed).toBe(given);
      });
    });

    describe('when the section was not given and its defaults are valid', () => {
      it('should build the defaults at the first read, not at binding, and only once', () => {
        bindSection(container, defaulted, undefined);
        expect(Defaulted.built).toBe(0);
        const first = container.get<Defaulted>(DefaultedToken);
        expect(first).toBeInstanceOf(Defaulted);
        expect(first.mode).toBe('plain');
        expect(container.get(Reader).defaulted).toBe(first);
        expect(container.isBound(DefaultedToken)).toBe(true);
        expect(Defaulted.built).toBe(1);
      });
    });

    describe('when the section was not given and its defaults are not valid', () => {
      it('should look unbound: isBound false, an optional injection undefined, a plain get an error', () => {
        bindSection(container, keyed, undefined);
        expect(container.isBound(KeyedToken)).toBe(false);
        expect(container.get(Reader).keyed).toBeUndefined();
        expect(() => container.get(KeyedToken)).toThrow();
      });
    });
  });
});
