import { REDACTED } from '../../core/config/secret.js';
import type { McpServerOptions } from './mcp.config.js';

/** How many characters of a stdio server's command line `starting` shows. */
const TARGET_CHARS = 120;

/**
 * `text` with every configured env/header value of the server, and the user, password and query
 * values of its URL (as written and as URL-encoded), replaced by `[redacted]`: an SDK or fetch
 * error may quote the URL.
 */
export function redactSecrets(options: McpServerOptions, text: string): string {
  let out = text;
  for (const v of secretsOf(options)) out = out.split(v).join(REDACTED);
  return out;
}

/** The values `redactSecrets` hides (those of 4 characters or more), longest first. */
function secretsOf(options: McpServerOptions): string[] {
  const all = [...Object.values(options.env ?? {}), ...Object.values(options.headers ?? {})].map((s) => s.reveal()).concat(urlSecrets(options.url));
  return all.filter((v) => v.length >= 4).sort((a, b) => b.length - a.length);
}

/**
 * The last output of a server kept for its start-up errors: `keep` characters, plus enough more
 * that a secret ending in those characters is held whole (the longest secret's length), so
 * `redactedTail` can redact it before cutting.
 */
export function appendTail(options: McpServerOptions, tail: string, chunk: string, keep: number): string {
  const margin = secretsOf(options)[0]?.length ?? 0;
  return (tail + chunk).slice(-(keep + margin));
}

/**
 * The last `keep` characters of `raw` (from `appendTail`) with the server's secrets redacted,
 * redacted before the cut; a secret the cut (or the start of `raw`) splits is not shown in part:
 * a start of the tail that is the end of a secret becomes `…`.
 */
export function redactedTail(options: McpServerOptions, raw: string, keep: number): string {
  const secrets = secretsOf(options);
  const redacted = redactSecrets(options, raw);
  let tail = redacted.slice(-keep);
  // Uncut (all the output there was, whole): nothing can start inside a secret.
  if (raw.length < keep + (secrets[0]?.length ?? 0) && redacted.length <= keep) return tail;
  for (const secret of secrets) {
    for (let k = Math.min(secret.length - 1, tail.length); k > 0; k--) {
      if (tail.startsWith(secret.slice(secret.length - k))) {
        tail = `…${tail.slice(k)}`;
        break;
      }
    }
  }
  return tail;
}

/** What `starting` shows of a server: its command line (shortened; secrets redacted) or its URL without query. */
export function describeTarget(options: McpServerOptions): string {
  if (options.url !== undefined) {
    try {
      const u = new URL(options.url);
      return `${u.origin}${u.pathname}`;
    } catch {
      return 'its url';
    }
  }
  const words = [options.command ?? '', ...(options.args ?? [])].map((w) => (w === '' || /[\s'"\\$`]/.test(w) ? JSON.stringify(w) : w));
  const line = redactSecrets(options, words.join(' '));
  return line.length > TARGET_CHARS ? `${line.slice(0, TARGET_CHARS - 1)}…` : line;
}

/** The secret parts of an MCP server URL: its password and user (raw and decoded) and its query values. */
function urlSecrets(url: string | undefined): string[] {
  if (url === undefined) return [];
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  const parts = [u.password, u.username, ...[...u.searchParams.values()]];
  return parts
    .flatMap((p) => {
      let decoded = p;
      try {
        decoded = decodeURIComponent(p);
      } catch {
        // Not percent-encoded text: the raw form is redacted.
      }
      return decoded === p ? [p] : [p, decoded];
    })
    .filter((p) => p !== '');
}
