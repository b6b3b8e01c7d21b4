import { getMetadataStorage, ValidationTypes } from '../util/class-validator.js';
import { AgentRxError } from '../errors.js';

/** How to fix a build that loses decorator metadata; every error below ends with it. */
const FIX =
  'compile with "experimentalDecorators": true and "emitDecoratorMetadata": true in tsconfig.json ' +
  '(esbuild-based runners such as tsx and vite do not emit the metadata: build with tsc, or swc with decoratorMetadata), ' +
  "and import 'reflect-metadata' once, first thing in the entry point, before any decorated class is loaded";

/**
 * Checks that the decorated DTO `type` (a tool's `inputType`) carries the TypeScript decorator
 * metadata it depends on. class-validator's decorators register their rules without it, so a build
 * without `emitDecoratorMetadata` (or one whose classes load before `reflect-metadata` is imported:
 * TypeScript's `__metadata` helper then silently records nothing) seems to work, but a nested
 * property (`@ValidateNested()`) has no `design:type`: the JSON Schema sent to the model shows it as
 * `{}` and every valid nested input fails validation. Throws `invalid_config` naming `owner`, the
 * class, the properties and the fix when such a property has no `design:type`, or when
 * `Reflect.getMetadata` is missing altogether.
 *
 * Scalar rules (`@IsString()`, `@IsInt()`…) carry their own type, so a DTO of scalars works either
 * way and passes: that is how plain JavaScript applies the decorators by hand.
 */
export function checkDecoratorMetadata(type: new () => unknown, owner: string): void {
  const metas = getMetadataStorage().getTargetValidationMetadatas(type, '', true, false);
  if (metas.length === 0) return;
  const reflect: { getMetadata?: (key: string, target: object, property: string) => unknown } = Reflect;
  const getMetadata = reflect.getMetadata;
  if (typeof getMetadata !== 'function') {
    throw new AgentRxError(
      'invalid_config',
      `${owner}: Reflect.getMetadata is missing (reflect-metadata is not loaded), so its input class ${nameOf(type)} has no type metadata; ${FIX}`,
      { owner, inputType: nameOf(type) },
    );
  }
  const nested = new Set(metas.filter((m) => m.type === ValidationTypes.NESTED_VALIDATION).map((m) => m.propertyName));
  const untyped = [...nested].filter((p) => getMetadata('design:type', type.prototype as object, p) === undefined);
  if (untyped.length === 0) return;
  throw new AgentRxError(
    'invalid_config',
    `${owner}: its input class ${nameOf(type)} has class-validator decorators but no TypeScript type metadata (design:type) on ${untyped.join(', ')}, ` +
      `so the model would get no JSON Schema for ${untyped.length === 1 ? 'it' : 'them'} and valid input would fail validation; ${FIX}`,
    { owner, inputType: nameOf(type), properties: untyped },
  );
}

function nameOf(type: new () => unknown): string {
  return type.name || '(anonymous class)';
}
