/** A `$ref` in a JSON Schema that does not resolve inside that schema. */
export interface UnresolvedRef {
  /** The reference as written (`#/definitions/Addr`, `addr.json`, `https://…`). */
  readonly ref: string;
  /** JSON Pointer of the subschema holding it (`/properties/home`; `` for the root). */
  readonly at: string;
}

// The base URI of a schema without `$id`. Any absolute URL works: it only lets relative
// references and nested `$id`s be resolved with `URL`; a special scheme is needed for that.
const DEFAULT_BASE = 'https://agentrx.invalid/tool-input.json';

/** Keywords whose values are data, not subschemas: a `$ref` inside them is not a reference. */
export const DATA_KEYWORDS: ReadonlySet<string> = new Set(['enum', 'const', 'default', 'examples']);

/**
 * Keywords whose value maps names to subschemas. Under them the keys are names, not keywords (a
 * property may be called "default" or "enum"), and every value is a subschema.
 */
export const NAME_MAP_KEYWORDS: ReadonlySet<string> = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas', 'dependencies']);

/**
 * The references of `schema` (`$ref`, `$dynamicRef`, `$recursiveRef`) that do not resolve
 * inside it, in document order. A tool's input schema is sent to the model host on its own: the
 * host has no other documents and fetches nothing, so a reference to an outside document (a URL,
 * a meta-schema, a schema an Ajv instance happens to know) or to a missing `definitions`/`$defs`
 * entry leaves the host a broken schema. Strict hosts refuse the whole request; lenient ones let
 * the model guess.
 *
 * Resolved here: JSON Pointer fragments (`#/definitions/Addr`, `#/$defs/Addr`, `#`), plain-name
 * fragments declared by `$anchor`/`$dynamicAnchor` or a draft-07 `$id: "#name"`, and URIs that a
 * `$id` inside the schema declares (resolved against the enclosing `$id`s, as JSON Schema does).
 * Never throws.
 */
export function unresolvedRefs(schema: Readonly<Record<string, unknown>>): UnresolvedRef[] {
  const docs = new Map<string, unknown>();
  const anchors = new Set<string>();
  const refs: { ref: string; base: string; at: string }[] = [];

  const visit = (node: unknown, base: string, at: string): void => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => visit(item, base, `${at}/${i}`));
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const o = node as Record<string, unknown>;
    let here = base;
    if (typeof o.$id === 'string') {
      // A draft-07 `$id: "#name"` names an anchor in the current document; any other `$id`
      // starts a document of its own (references resolve against it from here down).
      if (o.$id.startsWith('#')) anchors.add(`${base}${o.$id}`);
      else {
        const id = resolveUri(o.$id, base);
        if (id !== undefined) {
          here = splitFragment(id)[0];
          docs.set(here, o);
        }
      }
    }
    for (const key of ['$anchor', '$dynamicAnchor']) if (typeof o[key] === 'string') anchors.add(`${here}#${o[key] as string}`);
    for (const key of ['$ref', '$dynamicRef', '$recursiveRef']) if (typeof o[key] === 'string') refs.push({ ref: o[key] as string, base: here, at });
    for (const [key, child] of Object.entries(o)) {
      if (DATA_KEYWORDS.has(key)) continue;
      const path = `${at}/${escapePointer(key)}`;
      if (NAME_MAP_KEYWORDS.has(key) && typeof child === 'object' && child !== null && !Array.isArray(child)) {
        for (const [name, sub] of Object.entries(child)) visit(sub, here, `${path}/${escapePointer(name)}`);
      } else visit(child, here, path);
    }
  };
  const rootBase = splitFragment((typeof schema.$id === 'string' ? resolveUri(schema.$id, DEFAULT_BASE) : undefined) ?? DEFAULT_BASE)[0];
  docs.set(rootBase, schema);
  visit(schema, rootBase, '');

  return refs.filter((r) => !resolves(r.ref, r.base, docs, anchors)).map(({ ref, at }) => ({ ref, at }));
}

/**
 * One line naming each unresolved reference and where it is, for error messages:
 * `"#/definitions/Addr" (at /properties/home), "x.json" (at /properties/y)`.
 */
export function describeUnresolvedRefs(refs: readonly UnresolvedRef[]): string {
  return refs.map((r) => `${JSON.stringify(r.ref)} (at ${r.at || '/'})`).join(', ');
}

function resolves(ref: string, base: string, docs: ReadonlyMap<string, unknown>, anchors: ReadonlySet<string>): boolean {
  const uri = resolveUri(ref, base);
  if (uri === undefined) return false;
  const [doc, fragment] = splitFragment(uri);
  const target = docs.get(doc);
  if (target === undefined) return false;
  if (fragment === '') return true;
  if (!fragment.startsWith('/')) return anchors.has(`${doc}#${fragment}`);
  let node: unknown = target;
  for (const raw of fragment.split('/').slice(1)) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return false;
    }
    if (typeof node !== 'object' || node === null || !Object.prototype.hasOwnProperty.call(node, segment)) return false;
    node = (node as Record<string, unknown>)[segment];
  }
  return true;
}

function resolveUri(ref: string, base: string): string | undefined {
  try {
    return new URL(ref, base).href;
  } catch {
    return undefined;
  }
}

/** `[uri without fragment, fragment without '#']`. */
function splitFragment(uri: string): [string, string] {
  const i = uri.indexOf('#');
  return i < 0 ? [uri, ''] : [uri.slice(0, i), uri.slice(i + 1)];
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
