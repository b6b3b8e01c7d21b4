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
  const secrets = [...Object.values(options.env ?? {}), ...Object.values(options.headers ?? {})].map((s) => s.reveal()).concat(urlSecrets(options.url));
  for (const v of secrets) {
    if (v.length >= 4) out = out.split(v).join(REDACTED);
  }
  return out;
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
