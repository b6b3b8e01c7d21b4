import { Ajv, type AnySchema } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Type } from 'class-transformer';
import { ArrayMinSize, IsArray, IsBoolean, IsEnum, IsIn, IsInt, IsNumber, IsOptional, IsString, Length, Max, Min, ValidateNested } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { z } from 'zod';
import { Container } from '../../../src/core/util/inversify.js';
import { isAgentRxError } from '../../../src/core/errors.js';
import { ToolHandler, type InputType, type JsonSchema, type StandardSchemaV1 } from '../../../src/core/plugin/tool-handler.js';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import { compileToolInput } from '../../../src/core/tools/tool-input.js';
import { declarationOf } from '../../../src/core/tools/tool-schema.js';
import { demoToolsModule } from '../../../src/plugins/tools/index.js';

// ---- DTO inputs -------------------------------------------------------------------------------

class FlatInput {
  @IsString() @Length(1, 50) city!: string;
  @IsInt() @Min(1) @Max(7) days!: number;
  @IsOptional() @IsBoolean() metric?: boolean;
}

class Address {
  @IsString() street!: string;
  @IsString() city!: string;
}

class NestedInput {
  @IsString() name!: string;
  @ValidateNested() @Type(() => Address) address!: Address;
}

class ArrayOfNestedInput {
  @IsArray() @ArrayMinSize(1) @ValidateNested({ each: true }) @Type(() => Address) stops!: Address[];
}

class Geo {
  @IsNumber() lat!: number;
  @IsNumber() lon!: number;
}

class GeoAddress {
  @IsString() street!: string;
  @JSONSchema({ description: 'Where the street is.' })
  @ValidateNested()
  @Type(() => Geo)
  geo!: Geo;
}

class NestedInNestedInput {
  @ValidateNested() @Type(() => GeoAddress) home!: GeoAddress;
  @IsOptional() @ValidateNested({ each: true }) @Type(() => GeoAddress) others?: GeoAddress[];
}

/** The input class holds its own kind. */
class TreeInput {
  @IsString() label!: string;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => TreeInput) children?: TreeInput[];
}

/** A nested class holds its own kind. */
class Category {
  @IsString() name!: string;
  @IsOptional() @ValidateNested({ each: true }) @Type(() => Category) sub?: Category[];
}

class CatalogInput {
  @ValidateNested() @Type(() => Category) root!: Category;
  @ValidateNested() @Type(() => Address) warehouse!: Address;
}

/** Two nested classes hold each other (typed as `InstanceType<…>`: a class declared later is not a value yet). */
class PersonNode {
  @IsString() name!: string;
  @IsOptional() @ValidateNested() @Type(() => CompanyNode) employer?: InstanceType<typeof CompanyNode>;
}

class CompanyNode {
  @IsString() name!: string;
  @IsOptional() @ValidateNested({ each: true }) @Type(() => PersonNode) staff?: PersonNode[];
}

class MutualInput {
  @ValidateNested() @Type(() => PersonNode) person!: PersonNode;
}

class OptionalNestedInput {
  @IsString() q!: string;
  @IsOptional() @ValidateNested() @Type(() => Address) near?: Address;
}

enum Unit {
  Celsius = 'celsius',
  Fahrenheit = 'fahrenheit',
}

enum Priority {
  Low,
  High,
}

class EnumInput {
  @IsEnum(Unit) unit!: Unit;
  @IsEnum(Priority) priority!: Priority;
  @IsIn(['asc', 'desc']) order!: string;
}

// ---- zod inputs -------------------------------------------------------------------------------

const zAddress = z.object({ street: z.string(), city: z.string() });
type ZCategory = { name: string; sub?: ZCategory[] };
const zCategory: z.ZodType<ZCategory> = z.lazy(() => z.object({ name: z.string(), sub: z.array(zCategory).optional() }));

// ---- helpers ----------------------------------------------------------------------------------

type Case = { readonly name: string; readonly tool: ToolHandler; readonly dialect?: string; readonly valid: readonly Record<string, unknown>[] };

function classTool(name: string, inputType: InputType): ToolHandler {
  return { name, description: `${name} tool`, inputType, handle: () => 'ok' } as ToolHandler;
}

function schemaTool(name: string, inputSchema: JsonSchema | z.ZodType): ToolHandler {
  return defineTool({ name, description: `${name} tool`, inputSchema: inputSchema as JsonSchema, handle: () => 'ok' });
}

/** A fresh strict Ajv of the schema's dialect (a fresh one per schema: nothing leaks between cases). */
function strictAjv(dialect = ''): Ajv | Ajv2019 | Ajv2020 {
  if (dialect.includes('2020-12')) return new Ajv2020({ strict: true });
  if (dialect.includes('2019-09')) return new Ajv2019({ strict: true });
  return new Ajv({ strict: true });
}

/** Every `$ref` string in `schema`. */
function refsIn(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(refsIn);
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([k, v]) => (k === '$ref' && typeof v === 'string' ? [v] : refsIn(v)));
}

/** What the host is sent, compiled with strict Ajv, and whether each valid input passes both it and the tool's own check. */
async function check(c: Case): Promise<{ schema: Record<string, unknown>; schemaAccepts: boolean[]; toolAccepts: boolean[] }> {
  const schema = declarationOf(c.tool).inputSchema as Record<string, unknown>;
  const validate = strictAjv(c.dialect).compile(schema as AnySchema);
  const toolAccepts = await Promise.all(c.valid.map(async (v) => (await compileToolInput(c.tool).check(v)).ok));
  return { schema, schemaAccepts: c.valid.map((v) => validate(v) === true), toolAccepts };
}

function thrownBy(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

const address = { street: '1 Main St', city: 'Oslo' };

const dtoCases: Case[] = [
  {
    name: 'flat',
    tool: classTool('flat', FlatInput),
    valid: [
      { city: 'Oslo', days: 3 },
      { city: 'Oslo', days: 7, metric: true },
    ],
  },
  { name: 'nested', tool: classTool('nested', NestedInput), valid: [{ name: 'Ann', address }] },
  { name: 'array of nested', tool: classTool('array_of_nested', ArrayOfNestedInput), valid: [{ stops: [address, address] }] },
  {
    name: 'nested in nested',
    tool: classTool('nested_in_nested', NestedInNestedInput),
    valid: [
      { home: { street: 'x', geo: { lat: 1, lon: 2 } } },
      { home: { street: 'x', geo: { lat: 1, lon: 2 } }, others: [{ street: 'y', geo: { lat: 3, lon: 4 } }] },
    ],
  },
  {
    name: 'recursive input class',
    tool: classTool('tree', TreeInput),
    valid: [{ label: 'a' }, { label: 'a', children: [{ label: 'b', children: [{ label: 'c' }] }] }],
  },
  {
    name: 'recursive nested class',
    tool: classTool('catalog', CatalogInput),
    valid: [{ root: { name: 'all', sub: [{ name: 'tools', sub: [] }] }, warehouse: address }],
  },
  {
    name: 'mutually recursive classes',
    tool: classTool('mutual', MutualInput),
    valid: [{ person: { name: 'Ann', employer: { name: 'Acme', staff: [{ name: 'Bob' }] } } }],
  },
  { name: 'optional nested', tool: classTool('optional_nested', OptionalNestedInput), valid: [{ q: 'cafe' }, { q: 'cafe', near: address }] },
  { name: 'enums', tool: classTool('enums', EnumInput), valid: [{ unit: 'celsius', priority: Priority.High, order: 'asc' }] },
];

const jsonSchemaCases: Case[] = [
  {
    name: 'flat (draft-07)',
    tool: schemaTool('json_flat', {
      type: 'object',
      properties: { q: { type: 'string', minLength: 1 }, limit: { type: 'integer', minimum: 1 } },
      required: ['q'],
    }),
    valid: [{ q: 'cats' }],
  },
  {
    name: 'definitions (draft-07)',
    tool: schemaTool('json_definitions', {
      type: 'object',
      properties: { home: { $ref: '#/definitions/address' }, stops: { type: 'array', items: { $ref: '#/definitions/address' } } },
      required: ['home'],
      definitions: { address: { type: 'object', properties: { street: { type: 'string' } }, required: ['street'] } },
    }),
    valid: [{ home: { street: 'x' }, stops: [{ street: 'y' }] }],
  },
  {
    name: 'recursive $defs (2019-09)',
    dialect: 'https://json-schema.org/draft/2019-09/schema',
    tool: schemaTool('json_2019', {
      $schema: 'https://json-schema.org/draft/2019-09/schema',
      type: 'object',
      properties: { root: { $ref: '#/$defs/node' } },
      $defs: { node: { type: 'object', properties: { v: { type: 'number' }, kids: { type: 'array', items: { $ref: '#/$defs/node' } } } } },
    }),
    valid: [{ root: { v: 1, kids: [{ v: 2 }] } }],
  },
  {
    name: '$defs and prefixItems (2020-12)',
    dialect: 'https://json-schema.org/draft/2020-12/schema',
    tool: schemaTool('json_2020', {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { at: { $ref: '#/$defs/point' } },
      $defs: { point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false, minItems: 2 } },
    }),
    valid: [{ at: [1, 2] }],
  },
];

const zodCases: Case[] = [
  {
    name: 'flat',
    tool: schemaTool('zod_flat', z.object({ city: z.string().min(2), days: z.number().int().min(1).max(7).default(3) })),
    valid: [{ city: 'Oslo' }],
  },
  { name: 'nested', tool: schemaTool('zod_nested', z.object({ name: z.string(), address: zAddress })), valid: [{ name: 'Ann', address }] },
  { name: 'array of nested', tool: schemaTool('zod_array', z.object({ stops: z.array(zAddress).min(1) })), valid: [{ stops: [address] }] },
  {
    name: 'nested in nested',
    tool: schemaTool('zod_nested_in_nested', z.object({ home: z.object({ street: z.string(), geo: z.object({ lat: z.number(), lon: z.number() }) }) })),
    valid: [{ home: { street: 'x', geo: { lat: 1, lon: 2 } } }],
  },
  { name: 'recursive', tool: schemaTool('zod_recursive', z.object({ root: zCategory })), valid: [{ root: { name: 'all', sub: [{ name: 'tools' }] } }] },
  {
    name: 'optional nested',
    tool: schemaTool('zod_optional', z.object({ q: z.string(), near: zAddress.optional() })),
    valid: [{ q: 'x' }, { q: 'x', near: address }],
  },
  {
    name: 'enums',
    tool: schemaTool('zod_enums', z.object({ unit: z.enum(['celsius', 'fahrenheit']), priority: z.enum(Priority) })),
    valid: [{ unit: 'celsius', priority: Priority.High }],
  },
  { name: 'strict object', tool: schemaTool('zod_strict', z.strictObject({ q: z.string() })), valid: [{ q: 'x' }] },
];

// ---- tests ------------------------------------------------------------------------------------

describe('declarationOf', () => {
  describe('.inputSchema', () => {
    describe.each([
      ['a class-validator DTO', dtoCases],
      ['a JSON Schema', jsonSchemaCases],
      ['a zod 4 schema', zodCases],
    ])('when the input is %s', (_kind, cases) => {
      it.each(cases.map((c) => [c.name, c] as const))(
        'should be self-contained, compile with strict Ajv and accept what the tool accepts: %s',
        async (_name, c) => {
          const { schema, schemaAccepts, toolAccepts } = await check(c);
          expect(schema.type).toBe('object');
          expect(toolAccepts).toEqual(c.valid.map(() => true));
          expect(schemaAccepts).toEqual(c.valid.map(() => true));
        },
      );
    });

    describe('when the input is one of the demo tools (src/plugins/tools)', () => {
      it('should compile with strict Ajv for every tool', () => {
        const container = new Container();
        container.load(demoToolsModule);
        const tools = container.getAll<ToolHandler>(ToolHandler);
        expect(tools.map((t) => t.name).sort()).toEqual(['calculate', 'get_time', 'read_file']);
        for (const tool of tools) expect(() => strictAjv().compile(declarationOf(tool).inputSchema as AnySchema)).not.toThrow();
      });
    });

    describe('when a DTO nests classes that are not on a cycle', () => {
      it('should inline them, with no $ref left and the property description kept', () => {
        const schema = declarationOf(classTool('nested_in_nested', NestedInNestedInput)).inputSchema;
        expect(refsIn(schema)).toEqual([]);
        expect(schema).not.toHaveProperty('$defs');
        const geo = { type: 'object', properties: { lat: { type: 'number' }, lon: { type: 'number' } }, required: ['lat', 'lon'] };
        const home = {
          type: 'object',
          properties: { street: { type: 'string' }, geo: { ...geo, description: 'Where the street is.' } },
          required: ['street', 'geo'],
        };
        expect(schema).toEqual({ type: 'object', properties: { home, others: { type: 'array', items: home } }, required: ['home'] });
      });
    });

    describe('when a DTO nests a class that holds its own kind', () => {
      it('should keep that class once under $defs, point every $ref into it, and inline the rest', () => {
        const schema = declarationOf(classTool('catalog', CatalogInput)).inputSchema as Record<string, unknown>;
        expect(Object.keys(schema.$defs as object)).toEqual(['Category']);
        expect(refsIn(schema)).toEqual(['#/$defs/Category', '#/$defs/Category']);
        expect((schema.properties as Record<string, unknown>).warehouse).toEqual({
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
          required: ['street', 'city'],
        });
      });
    });

    describe('when the input class holds its own kind', () => {
      it('should write the input out in full at the top and keep it under $defs for the recursion', () => {
        const schema = declarationOf(classTool('tree', TreeInput)).inputSchema as Record<string, unknown>;
        const tree = {
          type: 'object',
          properties: { label: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/TreeInput' } } },
          required: ['label'],
        };
        expect(schema).toEqual({ ...tree, $defs: { TreeInput: tree } });
      });
    });

    describe('when two nested classes hold each other', () => {
      it('should keep only one of them under $defs', () => {
        const schema = declarationOf(classTool('mutual', MutualInput)).inputSchema as Record<string, unknown>;
        expect(Object.keys(schema.$defs as object)).toEqual(['PersonNode']);
        expect(new Set(refsIn(schema))).toEqual(new Set(['#/$defs/PersonNode']));
      });
    });

    describe('when a DTO has a numeric TypeScript enum', () => {
      it("should list the enum's numbers as integers, not the names of its reverse mapping", () => {
        const properties = declarationOf(classTool('enums', EnumInput)).inputSchema.properties as Record<string, unknown>;
        expect(properties.priority).toEqual({ type: 'integer', enum: [0, 1] });
        expect(properties.unit).toEqual({ type: 'string', enum: ['celsius', 'fahrenheit'] });
      });
    });
  });
});

describe('compileToolInput', () => {
  describe('when the input would send the host a $ref that does not resolve inside its schema', () => {
    class RefDecoratedInput {
      @JSONSchema({ $ref: 'https://example.com/schemas/geo.json' })
      @IsOptional()
      geo?: unknown;
    }

    class UntypedNestedInput {
      @ValidateNested() address!: Address;
    }

    class UntypedArrayInput {
      @ValidateNested({ each: true }) stops!: Address[];
    }

    const brokenStandardSchema: StandardSchemaV1 = {
      '~standard': {
        version: 1,
        vendor: 'acme',
        validate: (value) => ({ value }),
        jsonSchema: { input: () => ({ type: 'object', properties: { at: { $ref: '#/$defs/Point' } } }) },
      },
    };

    it.each([
      [
        'a JSON Schema pointing at a missing definition',
        () => schemaTool('broken', { type: 'object', properties: { home: { $ref: '#/definitions/Address' } } }),
        '"#/definitions/Address" (at /properties/home)',
      ],
      [
        'a JSON Schema pointing at the draft-07 meta-schema (Ajv knows it, the host does not)',
        () => schemaTool('broken', { type: 'object', properties: { s: { $ref: 'http://json-schema.org/draft-07/schema#' } } }),
        '"http://json-schema.org/draft-07/schema#" (at /properties/s)',
      ],
      [
        'a zod schema with a raw $ref in .meta()',
        () => schemaTool('broken', z.object({ at: z.any().meta({ $ref: '#/$defs/Point' }) })),
        '"#/$defs/Point" (at /properties/at)',
      ],
      [
        'a Standard Schema whose converter leaves out a definition',
        () => defineTool({ name: 'broken', description: 'x', inputSchema: brokenStandardSchema, handle: () => 'ok' }),
        '"#/$defs/Point" (at /properties/at)',
      ],
      [
        'a DTO whose @JSONSchema() adds an outside $ref',
        () => compileToolInput(classTool('broken', RefDecoratedInput)),
        '"https://example.com/schemas/geo.json" (at /properties/geo)',
      ],
    ])('should refuse %s with invalid_config naming the tool, the $ref and the fix', (_what, define, named) => {
      const err = thrownBy(define);
      expect(isAgentRxError(err, 'invalid_config')).toBe(true);
      const message = (err as Error).message;
      expect(message).toMatch(/^tool 'broken': /);
      expect(message).toContain(`a $ref that does not resolve inside it: ${named}`);
      expect(message).toMatch(/the host gets only this schema/);
    });

    it("should refuse a JSON Schema whose $ref only resolves through another tool's $id in the shared Ajv", () => {
      const pointId = 'https://agentrx.test/schemas/point.json';
      const owner = schemaTool('owner', {
        type: 'object',
        properties: { at: { $ref: pointId } },
        definitions: { point: { $id: pointId, type: 'object', properties: { x: { type: 'number' } } } },
      });
      expect(declarationOf(owner).inputSchema).toHaveProperty('definitions.point.$id', pointId);
      const err = thrownBy(() => schemaTool('borrower', { type: 'object', properties: { at: { $ref: pointId } } }));
      expect(isAgentRxError(err, 'invalid_config')).toBe(true);
      expect((err as Error).message).toContain(
        `tool 'borrower': its input JSON Schema has a $ref that does not resolve inside it: "${pointId}" (at /properties/at)`,
      );
    });

    it.each([
      ['a nested class', UntypedNestedInput, "its input class UntypedNestedInput has @ValidateNested() on 'address' but no @Type(() => Address)"],
      ['an array of a nested class', UntypedArrayInput, "its input class UntypedArrayInput has @ValidateNested() on 'stops' but no @Type(() => ItemClass)"],
    ])('should refuse a DTO with @ValidateNested() on %s but no @Type, saying what to add', (_what, inputType, says) => {
      const err = thrownBy(() => compileToolInput(classTool('untyped', inputType)));
      expect(isAgentRxError(err, 'invalid_config')).toBe(true);
      expect((err as Error).message).toContain(`tool 'untyped': ${says}`);
      expect((err as Error).message).toMatch(/add @Type\(\(\) => \w+\) next to @ValidateNested\(\)$/);
    });
  });
});
