import { plainToInstance } from '../util/class-transformer.js';
import { IS_ENUM, jsonSchemaConverter, ValidationTypes } from '../util/class-validator.js';
import type { InputType } from '../plugin/tool-handler.js';
import { DATA_KEYWORDS, describeUnresolvedRefs, NAME_MAP_KEYWORDS, unresolvedRefs } from './unresolved-refs.js';

type Schema = Record<string, unknown>;
// A class as class-validator's metadata names it (`ValidationMetadata.target`).
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
type AnyClass = Function;
type Converters = NonNullable<NonNullable<Parameters<ReturnType<typeof jsonSchemaConverter>>[1]>['additionalConverters']>;
type ConverterMeta = Parameters<Extract<Converters[string], (...args: never[]) => unknown>>[0];

/** Where the definitions of recursive classes live in a generated schema, and how they are referenced. */
const DEFS_KEYWORD = '$defs';
const DEF_PREFIX = `#/${DEFS_KEYWORD}/`;

/**
 * The JSON Schema of a class-validator DTO (a tool's `inputType`), self-contained: it is sent to
 * the model host on its own, so every `$ref` must resolve inside it.
 *
 * class-validator-jsonschema describes one class at a time and points at each nested class
 * (`@ValidateNested()`) with `{ "$ref": "#/definitions/<Name>" }` but leaves the definitions out;
 * strict hosts refuse such a schema and lenient ones let the model guess. Here every class the
 * input reaches is generated, then:
 * - a nested class that is not part of a cycle is inlined where it is used (hosts such as OpenAI
 *   strict mode handle inline subschemas best);
 * - a class on a cycle (a tree node that holds its own kind, the input class included) is kept
 *   once under `$defs` and referenced as `#/$defs/<Name>`; the input class is also written out
 *   in full at the top, where hosts want an object schema.
 *
 * The nested class is the one class-transformer builds for the property (its `@Type(() => X)`),
 * because that is the instance class-validator checks; `design:type` cannot name an array's items.
 * Numeric TypeScript enums (`@IsEnum`) get their numbers, not the names of their reverse mapping.
 *
 * Throws an Error saying what to fix (the caller names the tool) when a `@ValidateNested()`
 * property has a type but no `@Type(() => X)` (class-transformer then leaves the value a plain
 * object, so every valid input would fail validation), or when a `$ref` still does not resolve
 * (one added by a `@JSONSchema()` decorator). A nested property without any type metadata
 * (no `emitDecoratorMetadata`) gets `{}`: `checkDecoratorMetadata` reports that case with its fix.
 */
export function dtoJsonSchema(root: InputType): Schema {
  const keys = new Map<AnyClass, string>();
  const order: AnyClass[] = [];
  const refTo = (cls: AnyClass): Schema => {
    let key = keys.get(cls);
    if (key === undefined) {
      key = uniqueKey(cls, new Set(keys.values()));
      keys.set(cls, key);
      order.push(cls);
    }
    return { $ref: DEF_PREFIX + key };
  };
  let current: AnyClass = root;
  const converters: Converters = {
    [ValidationTypes.NESTED_VALIDATION]: (meta) => nestedSchema(current, meta, refTo),
    // The library's fallback for rules it has no converter for (`@IsTimeZone`, `@MinDate`, custom
    // ones) points a `$ref` at the property's type (`Array`, `Date`, a class) and defines none.
    // Such a rule says nothing of the shape, so only a primitive type is kept.
    [ValidationTypes.CUSTOM_VALIDATION]: (meta) => primitiveSchema(designTypeOf(meta)),
    // The library lists every value of a numeric enum's reverse mapping under `type: "string"`.
    [IS_ENUM]: (meta) => enumSchema(meta.constraints[0] as Record<string, unknown>),
  };
  refTo(root);
  const raw = new Map<string, Schema>();
  // `order` grows while it is walked: each class's nested classes are queued as they are met.
  for (let i = 0; i < order.length; i++) {
    current = order[i]!;
    const generated = jsonSchemaConverter()(current, { additionalConverters: converters }) as Schema;
    raw.set(keys.get(current)!, { type: 'object', properties: {}, ...generated });
  }
  const schema = assemble(keys.get(root)!, raw);
  const broken = unresolvedRefs(schema);
  if (broken.length > 0) {
    throw new Error(
      `its input class ${root.name || '(anonymous class)'} yields a JSON Schema with a $ref that does not resolve inside it: ${describeUnresolvedRefs(broken)}; ` +
        'the host gets only this schema, so write the referenced schema inline in the @JSONSchema() decorator that adds the $ref',
    );
  }
  return schema;
}

/** The schema of a `@ValidateNested()` property of `owner`: a reference to its class, or a primitive's schema. */
function nestedSchema(owner: AnyClass, meta: ConverterMeta, refTo: (cls: AnyClass) => Schema): Schema {
  const design = designTypeOf(meta);
  const primitive = primitiveSchema(design);
  if (primitive) return primitive;
  const built = builtClassOf(owner, meta.propertyName, meta.each === true);
  if (built === 'unknown') return isUserClass(design) ? refTo(design) : {};
  if (built !== undefined) return isUserClass(built) ? refTo(built) : {};
  if (design === undefined) return {};
  const item = meta.each === true ? 'ItemClass' : isUserClass(design) ? design.name : 'NestedClass';
  throw new Error(
    `its input class ${owner.name || '(anonymous class)'} has @ValidateNested() on '${meta.propertyName}' but no @Type(() => ${item}) (class-transformer), ` +
      `so the value stays a plain object and every valid input would fail validation; add @Type(() => ${item}) next to @ValidateNested()`,
  );
}

/**
 * The class class-transformer builds for `property` of `owner` (an item's class when `each`):
 * what `plainToInstance` makes of an empty object there, as the tool's input check does.
 * `undefined` when it stays a plain object; `'unknown'` when building it threw (a `@Transform`
 * or a constructor that refuses the probe).
 */
function builtClassOf(owner: AnyClass, property: string, each: boolean): AnyClass | undefined | 'unknown' {
  let value: unknown;
  try {
    const instance = plainToInstance(owner as InputType, { [property]: each ? [{}] : {} }) as Record<string, unknown>;
    value = instance[property];
  } catch {
    return 'unknown';
  }
  if (each)
    value = value instanceof Map ? [...value.values()][0] : Array.isArray(value) || value instanceof Set ? [...(value as Iterable<unknown>)][0] : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  const ctor = (value as object).constructor;
  return typeof ctor === 'function' && ctor !== Object ? ctor : undefined;
}

function designTypeOf(meta: ConverterMeta): unknown {
  const reflect: { getMetadata?: (key: string, target: object, property: string) => unknown } = Reflect;
  if (typeof meta.target !== 'function' || typeof reflect.getMetadata !== 'function') return undefined;
  return reflect.getMetadata('design:type', meta.target.prototype as object, meta.propertyName);
}

/** The schema of a primitive wrapper type, as class-validator-jsonschema writes it; undefined for anything else. */
function primitiveSchema(type: unknown): Schema | undefined {
  if (type === String || type === Symbol) return { type: 'string' };
  if (type === Number) return { type: 'number' };
  if (type === Boolean) return { type: 'boolean' };
  return undefined;
}

/** A class of the application (not `Object`, `Array`, `Date`, `Map` and other built-ins, whose JSON shape is not their properties). */
function isUserClass(type: unknown): type is AnyClass {
  if (typeof type !== 'function') return false;
  return !(type.name && (globalThis as Record<string, unknown>)[type.name] === type);
}

/**
 * `@IsEnum(E)`: E's values with their JSON type. A numeric TypeScript enum also maps its numbers
 * back to its names; those names are left out (the numbers are its values).
 */
function enumSchema(entity: Record<string, unknown>): Schema {
  const values = [...new Set(Object.values(entity).filter((v) => !(typeof v === 'string' && typeof entity[v] === 'number')))];
  if (values.every((v) => typeof v === 'string')) return { type: 'string', enum: values };
  if (values.every((v) => typeof v === 'number')) return { type: values.every((v) => Number.isInteger(v)) ? 'integer' : 'number', enum: values };
  // Mixed: no single `type`; a list of types is refused by some hosts and by Ajv's strict mode.
  return { enum: values };
}

/** A definition name for `cls`: its name (JSON Pointer- and host-safe characters), made unique. */
function uniqueKey(cls: AnyClass, taken: ReadonlySet<string>): string {
  const base = (cls.name || 'Anonymous').replace(/[^A-Za-z0-9_]/g, '_');
  let key = base;
  for (let n = 2; taken.has(key); n++) key = `${base}_${n}`;
  return key;
}

/**
 * The input schema from the generated class schemas (`raw`, keyed by definition name, each
 * pointing at the others with `#/$defs/<key>`): enough classes to break every cycle stay in
 * `$defs` (see `keptForCycles`), every other reference is replaced by its class's schema.
 */
function assemble(rootKey: string, raw: ReadonlyMap<string, Schema>): Schema {
  const edges = new Map([...raw].map(([key, schema]) => [key, refsOf(schema, raw)]));
  const kept = keptForCycles([...raw.keys()], edges);
  const expand = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(expand);
    if (typeof node !== 'object' || node === null) return node;
    const out: Schema = {};
    for (const [k, v] of Object.entries(node)) out[k] = DATA_KEYWORDS.has(k) ? v : NAME_MAP_KEYWORDS.has(k) && isRecord(v) ? mapValues(v, expand) : expand(v);
    const key = defKeyOf(out.$ref, raw);
    if (key === undefined || kept.has(key)) return out;
    // Inlined: the class's schema, then what the property adds beside the $ref (its description…).
    const { $ref: _ref, ...beside } = out;
    return { ...(expand(raw.get(key)) as Schema), ...beside };
  };
  // The root is always written out in full (hosts want an object schema at the top), even when
  // it is also kept in `$defs` for its own recursive references.
  const schema = expand(raw.get(rootKey)) as Schema;
  if (kept.size > 0) {
    const own = typeof schema[DEFS_KEYWORD] === 'object' && schema[DEFS_KEYWORD] !== null ? (schema[DEFS_KEYWORD] as Schema) : {};
    schema[DEFS_KEYWORD] = { ...own, ...Object.fromEntries([...kept].map((key) => [key, expand(raw.get(key))])) };
  }
  return schema;
}

/**
 * The classes to keep in `$defs` so that inlining the others ends: walking `keys` in order (the
 * input class first), a class is kept when it reaches itself through classes not kept yet. What
 * is left is acyclic, and a cycle through a kept class stops there (`Input → Addr → Input` keeps
 * only `Input`).
 */
function keptForCycles(keys: readonly string[], edges: ReadonlyMap<string, ReadonlySet<string>>): Set<string> {
  const kept = new Set<string>();
  for (const start of keys) {
    const seen = new Set<string>();
    const stack = [...(edges.get(start) ?? [])];
    while (stack.length > 0) {
      const key = stack.pop()!;
      if (key === start) {
        kept.add(start);
        break;
      }
      if (kept.has(key) || seen.has(key)) continue;
      seen.add(key);
      stack.push(...(edges.get(key) ?? []));
    }
  }
  return kept;
}

/** The definition key `ref` points at, when it is one of ours. */
function defKeyOf(ref: unknown, raw: ReadonlyMap<string, Schema>): string | undefined {
  if (typeof ref !== 'string' || !ref.startsWith(DEF_PREFIX)) return undefined;
  const key = ref.slice(DEF_PREFIX.length);
  return raw.has(key) ? key : undefined;
}

/** The definition keys `node` references. */
function refsOf(node: unknown, raw: ReadonlyMap<string, Schema>, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) refsOf(item, raw, into);
  else if (typeof node === 'object' && node !== null) {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref') {
        const key = defKeyOf(v, raw);
        if (key !== undefined) into.add(key);
      } else if (NAME_MAP_KEYWORDS.has(k) && isRecord(v)) for (const sub of Object.values(v)) refsOf(sub, raw, into);
      else if (!DATA_KEYWORDS.has(k)) refsOf(v, raw, into);
    }
  }
  return into;
}

function isRecord(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function mapValues(o: Schema, f: (v: unknown) => unknown): Schema {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
}
