/**
 * True for an object literal (or `Object.create(null)`), from any realm; false for arrays, class
 * instances, null and primitives.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  // Realm-independent: an object literal from another realm (vm, worker, structuredClone) has
  // that realm's Object.prototype, whose own prototype is null.
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === null || (Object.getPrototypeOf(proto) === null && Object.prototype.toString.call(value) === '[object Object]');
}

/** `null`, `an array` or the `typeof` word, for "expected an object, got …" messages. */
export function describeType(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}
