import { createHash } from 'node:crypto';
import { AgentRxError } from '../../../core/errors.js';

/**
 * The AgentCore harness name policy: `[A-Za-z][A-Za-z0-9_]{0,39}`. A version of `base` is named
 * `<prefix>_<base>_<digest8>`: every character of the base outside `[A-Za-z0-9_]` becomes `_` (one
 * per code point, so a multibyte character is one `_`), and a base too long for the 40 characters
 * is cut and followed by `_<hash6>`, 6 hex digits of the SHA-256 of the full base (two long bases
 * sharing a prefix still get distinct names). The digest is never cut; the prefix supplies the
 * leading letter. Bases that differ only in characters outside the charset (`a-b`, `a.b`) share
 * their names' stem: give agents distinct names within `[A-Za-z0-9_-]`.
 */

/** The longest harness name the control plane accepts. */
export const AGENTCORE_NAME_MAX = 40;

const PREFIX = /^[A-Za-z][A-Za-z0-9_]{0,19}$/;
const DIGEST8 = /^[0-9a-f]{8}$/;

/** The harness name of (`base`, `digest`) under `prefix` (see the module doc). Throws `invalid_config` for a prefix outside `[A-Za-z][A-Za-z0-9_]{0,19}`. */
export function agentCoreNameOf(prefix: string, base: string, digest: string): string {
  if (!PREFIX.test(prefix)) {
    throw new AgentRxError(
      'invalid_config',
      `bedrock-agentcore: harnessNamePrefix "${prefix}" must be 1-20 characters of [A-Za-z0-9_] starting with a letter`,
      {
        path: 'providers.bedrock-agentcore.harnessNamePrefix',
      },
    );
  }
  const digest8 = digest.slice(0, 8);
  const safe = Array.from(base, (c) => (/^[A-Za-z0-9_]$/.test(c) ? c : '_')).join('');
  if (safe === '') return `${prefix}_${digest8}`;
  const room = AGENTCORE_NAME_MAX - prefix.length - 2 - digest8.length;
  if (safe.length <= room) return `${prefix}_${safe}_${digest8}`;
  const hash = createHash('sha256').update(base, 'utf8').digest('hex').slice(0, 6);
  return `${prefix}_${safe.slice(0, Math.max(0, room - hash.length - 1))}_${hash}_${digest8}`;
}

/** True when `name` is the harness name of some version of `base` under `prefix`. */
export function isAgentCoreNameOf(name: string, prefix: string, base: string): boolean {
  const stem = agentCoreNameOf(prefix, base, '00000000').slice(0, -8);
  return name.length === stem.length + 8 && name.startsWith(stem) && DIGEST8.test(name.slice(stem.length));
}
