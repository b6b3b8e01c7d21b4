import { createRequire } from 'node:module';
import type * as CV from 'class-validator';
import type * as CVJ from 'class-validator-jsonschema';
import './reflect-metadata.js';

/**
 * The one place the sources take class-validator's (and class-validator-jsonschema's) runtime
 * from. class-validator's index loads every decorator it has, validator.js and libphonenumber's
 * metadata (about 320 modules, a third of the package's import time); the files of its CommonJS
 * build that define what agentrx uses are about 45. They are the same files the index loads, in
 * the same module cache, so a host's `import { IsString } from 'class-validator'` and these
 * share everything (class-validator keeps its metadata storage on the global object anyway).
 * class-validator-jsonschema's converter loads class-validator's whole index: it loads at the
 * first DTO schema (`jsonSchemaConverter`), and so does its `JSONSchema` decorator's file.
 */
const load = createRequire(import.meta.url);
const part = (file: string): typeof CV => load(`class-validator/cjs/${file}.js`) as typeof CV;

export const { ArrayMaxSize } = part('decorator/array/ArrayMaxSize');
export const { IsArray, IS_ARRAY } = part('decorator/typechecker/IsArray');
export const { IsBoolean, IS_BOOLEAN } = part('decorator/typechecker/IsBoolean');
export const { IS_ENUM } = part('decorator/typechecker/IsEnum');
export const { IsInt, IS_INT } = part('decorator/typechecker/IsInt');
export const { IS_NUMBER } = part('decorator/typechecker/IsNumber');
export const { IsObject, IS_OBJECT } = part('decorator/typechecker/IsObject');
export const { IsString, IS_STRING } = part('decorator/typechecker/IsString');
export const { IsIn, IS_IN } = part('decorator/common/IsIn');
export const { IsNotEmpty, IS_NOT_EMPTY } = part('decorator/common/IsNotEmpty');
export const { IsOptional } = part('decorator/common/IsOptional');
export const { ValidateBy, buildMessage } = part('decorator/common/ValidateBy');
export const { ValidateIf } = part('decorator/common/ValidateIf');
export const { ValidateNested } = part('decorator/common/ValidateNested');
export const { IS_POSITIVE } = part('decorator/number/IsPositive');
export const { Max, MAX } = part('decorator/number/Max');
export const { Min, MIN } = part('decorator/number/Min');
export const { IsEmail } = part('decorator/string/IsEmail');
export const { IsTimeZone } = part('decorator/string/IsTimeZone');
export const { IsUrl, IS_URL } = part('decorator/string/IsUrl');
export const { Length, IS_LENGTH } = part('decorator/string/Length');
export const { Matches, MATCHES } = part('decorator/string/Matches');
export const { MaxLength, MAX_LENGTH } = part('decorator/string/MaxLength');
export const { MinLength, MIN_LENGTH } = part('decorator/string/MinLength');
export const { getMetadataStorage } = part('metadata/MetadataStorage');
export const { ValidationTypes } = part('validation/ValidationTypes');

const { getFromContainer } = part('container');
const { Validator } = part('validation/Validator');

/** class-validator's `validate(object, options)` (what its index defines, without loading the index). */
export function validate(object: object, options?: CV.ValidatorOptions): Promise<CV.ValidationError[]> {
  return getFromContainer(Validator).validate(object, options);
}

/** class-validator's `validateSync(object, options)`. */
export function validateSync(object: object, options?: CV.ValidatorOptions): CV.ValidationError[] {
  return getFromContainer(Validator).validateSync(object, options);
}

export type { ValidationArguments, ValidationError, ValidationOptions, ValidatorOptions } from 'class-validator';

type JsonSchemaArgs = [schema: Parameters<typeof CVJ.JSONSchema>[0], target: object, key: string | undefined];
/** What `@JSONSchema` recorded before its real decorator loaded. */
const recorded: JsonSchemaArgs[] = [];
let decorate: typeof CVJ.JSONSchema | undefined;

/** Loads class-validator-jsonschema's decorators file and applies what was recorded before it. */
function loadJsonSchemaDecorator(): void {
  const real = (decorate ??= (load('class-validator-jsonschema/build/decorators.js') as typeof CVJ).JSONSchema);
  for (const [schema, target, key] of recorded.splice(0)) real(schema)(target, key);
}

/**
 * class-validator-jsonschema's `@JSONSchema`. Its decorators file loads reflect-metadata's full
 * build (its polyfills too), so what the decorator is given is recorded here and applied to that
 * file's decorator when the converter loads; only the converter reads it.
 */
export const JSONSchema: typeof CVJ.JSONSchema = (schema) => (target, key) => {
  if (decorate !== undefined) decorate(schema)(target, key);
  else recorded.push([schema, target, key]);
};

/** class-validator-jsonschema's converter, loaded at its first use (it loads class-validator's index). */
export function jsonSchemaConverter(): typeof CVJ.targetConstructorToSchema {
  loadJsonSchemaDecorator();
  return (load('class-validator-jsonschema') as typeof CVJ).targetConstructorToSchema;
}
