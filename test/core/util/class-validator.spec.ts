import * as index from 'class-validator';
import * as jsonschema from 'class-validator-jsonschema';
import * as shim from '../../../src/core/util/class-validator.js';
import { IsInt, IsString, Min, validate, validateSync } from '../../../src/core/util/class-validator.js';

/**
 * The sources take class-validator from its files, not its index (issue 28: the index loads ~320
 * modules). Each name is the index's own object, so a host's decorators and these are one.
 */
describe('src/core/util/class-validator', () => {
  const own = Object.entries(shim).filter(([name]) => !['validate', 'validateSync', 'jsonSchemaConverter', 'JSONSchema'].includes(name));

  it.each(own)("should export class-validator's own %s", (name, value) => {
    expect(value).toBeDefined();
    expect(value).toBe((index as Record<string, unknown>)[name]);
  });

  it("should record @JSONSchema until the converter loads, then give it to class-validator-jsonschema's own", () => {
    class Before {
      @shim.JSONSchema({ description: 'before the converter' }) @IsString() a!: string;
    }
    const convert = shim.jsonSchemaConverter();
    class After {
      @shim.JSONSchema({ description: 'after it' }) @IsString() b!: string;
    }
    class Host {
      @jsonschema.JSONSchema({ description: "the host's own" }) @IsString() c!: string;
    }

    expect(convert).toBe(jsonschema.targetConstructorToSchema);
    expect(convert(Before).properties).toEqual({ a: { type: 'string', description: 'before the converter' } });
    expect(convert(After).properties).toEqual({ b: { type: 'string', description: 'after it' } });
    expect(convert(Host).properties).toEqual({ c: { type: 'string', description: "the host's own" } });
  });

  it("should validate like class-validator's validate and validateSync, with a host's decorators too", async () => {
    class Dto {
      @IsString() name!: unknown;
      @IsInt() @Min(1) count!: unknown;
      @index.IsEmail() mail!: unknown;
    }
    const bad = Object.assign(new Dto(), { name: 3, count: 0, mail: 'x' });
    const good = Object.assign(new Dto(), { name: 'a', count: 2, mail: 'a@example.com' });
    const props = (errors: index.ValidationError[]): string[] => errors.map((e) => e.property).sort();

    expect(props(await validate(bad))).toEqual(['count', 'mail', 'name']);
    expect(props(validateSync(bad))).toEqual(props(await index.validate(bad)));
    expect(await validate(good)).toEqual([]);
    expect(validateSync(good, { forbidUnknownValues: true })).toEqual([]);
  });
});
