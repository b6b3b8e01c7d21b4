import { type ConfigIssue, configIssue, joinPath, lastKey } from './config-issue.js';
import { isPlainObject } from './plain-object.js';

/** Environment used for `${VAR}` interpolation. */
export type ConfigEnv = Readonly<Record<string, string | undefined>>;

const REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

/**
 * A copy of `value` in which every string gets `${VAR}` / `${VAR:-default}` interpolation from
 * `env` (`$${` is a literal `${`; the default applies when VAR is unset or empty). A reference that
 * is unterminated, malformed or names an unset variable without default adds an issue at its
 * dotted path (under `path`) to `issues`, and leaves that string as it was. Never throws.
 */
export function interpolateEnv(value: unknown, path: string, env: ConfigEnv, issues: ConfigIssue[]): unknown {
  if (typeof value === 'string') return interpolateString(value, path, env, issues);
  if (Array.isArray(value)) return value.map((v, i) => interpolateEnv(v, joinPath(path, String(i)), env, issues));
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateEnv(v, joinPath(path, k), env, issues)]));
  }
  return value;
}

function interpolateString(text: string, path: string, env: ConfigEnv, issues: ConfigIssue[]): string {
  if (!text.includes('${')) return text;
  const key = lastKey(path);
  let out = '';
  let i = 0;
  while (i < text.length) {
    const start = text.indexOf('${', i);
    if (start < 0) break;
    if (start > 0 && text[start - 1] === '$') {
      out += text.slice(i, start - 1) + '${';
      i = start + 2;
      continue;
    }
    out += text.slice(i, start);
    const end = text.indexOf('}', start + 2);
    if (end < 0) {
      issues.push(configIssue(path, key, 'unterminated ${ reference', text, 'a reference like ${NAME} or ${NAME:-default}'));
      return text;
    }
    const match = REFERENCE.exec(text.slice(start + 2, end));
    if (!match) {
      issues.push(configIssue(path, key, 'malformed ${…} reference', text, 'a reference like ${NAME} or ${NAME:-default}'));
      return text;
    }
    const name = match[1] ?? '';
    const fallback = match[2];
    const set = env[name];
    if (fallback !== undefined && (set === undefined || set === '')) out += fallback;
    else if (set !== undefined) out += set;
    else {
      issues.push(configIssue(path, key, `environment variable ${name} is not set`, text, `${name} to be set, or a default as in \${${name}:-value}`));
      return text;
    }
    i = end + 1;
  }
  return out + text.slice(i);
}
