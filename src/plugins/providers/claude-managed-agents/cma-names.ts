import { createHash } from 'node:crypto';

/**
 * The Managed Agents name policy: a version of `base` is named `<base>_<digest8>` (the first 8
 * hex digits of its digest), at most {@link CMA_NAME_MAX} characters. A base too long for that is
 * cut at a character boundary (a whole grapheme: never half a surrogate pair or an accent without
 * its letter) and followed by `_<hash6>`, 6 hex digits of the SHA-256 of the full base, so two long
 * bases sharing a prefix still get distinct names. The digest is never cut. Length is counted in
 * UTF-16 code units, never less than the code points the host may count, so a name within the
 * limit here is within it there too.
 */

/** The longest name the host accepts. */
export const CMA_NAME_MAX = 256;

const DIGEST8 = /^[0-9a-f]{8}$/;

/** `<base>_<digest8>` under the policy above. `digest` is the full lowercase hex digest (at least 8 digits). */
export function cmaNameOf(base: string, digest: string): string {
  const suffix = `_${digest.slice(0, 8)}`;
  if (base.length + suffix.length <= CMA_NAME_MAX) return `${base}${suffix}`;
  const tail = `_${shortHash(base)}${suffix}`;
  return `${cutAtCharacter(base, CMA_NAME_MAX - tail.length)}${tail}`;
}

/** True when `name` is the host name of some version of `base` (the policy's stem, then 8 hex digits). */
export function isCmaNameOf(name: string, base: string): boolean {
  const stem = cmaNameOf(base, '00000000').slice(0, -8);
  return name.length === stem.length + 8 && name.startsWith(stem) && DIGEST8.test(name.slice(stem.length));
}

/** 6 hex digits of the SHA-256 of `text`. */
export function shortHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 6);
}

/** The longest prefix of `text` made of whole graphemes and at most `max` UTF-16 code units. */
export function cutAtCharacter(text: string, max: number): string {
  let out = '';
  for (const { segment } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)) {
    if (out.length + segment.length > max) break;
    out += segment;
  }
  return out;
}
