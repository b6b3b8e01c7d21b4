import * as index from 'class-transformer';
import * as shim from '../../../src/core/util/class-transformer.js';

/** The sources take class-transformer by require (issue 28); each name is the package's own object. */
describe('src/core/util/class-transformer', () => {
  it.each(Object.entries(shim))("should export class-transformer's own %s", (name, value) => {
    expect(value).toBeDefined();
    expect(value).toBe((index as Record<string, unknown>)[name]);
  });

  it("should see a host's @Type through its plainToInstance (one metadata storage)", () => {
    class Inner {
      n!: number;
    }
    class Outer {
      @index.Type(() => Inner) inner!: Inner;
    }
    expect(shim.plainToInstance(Outer, { inner: { n: 1 } }).inner).toBeInstanceOf(Inner);
  });
});
