import { AgentRxError } from '../errors.js';

/**
 * Artifact name checks, run before any request or command: an artifact name is one plain file
 * name, never a path. Every host refuses the empty name, `.` and `..`, path separators (`/`,
 * `\`), NUL and other control characters, and names longer than {@link MAX_ARTIFACT_NAME}
 * bytes; a host whose storage is reached through a shell (AgentCore) also restricts names to
 * {@link PORTABLE_NAME} so a name can never be read as shell syntax.
 */

/** Longest artifact name, in UTF-8 bytes (a common file-system limit). */
export const MAX_ARTIFACT_NAME = 255;

/** The portable file-name set (POSIX's): `[A-Za-z0-9._-]`, at least one character. */
export const PORTABLE_NAME = /^[A-Za-z0-9._-]+$/;

/** Which names a host accepts: `any` file name, or only `portable` ones (`[A-Za-z0-9._-]`). */
export type ArtifactNameRule = 'any' | 'portable';

// eslint-disable-next-line no-control-regex -- the point is to find control characters
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Returns `name` when it is a safe artifact name under `rule`, else throws `invalid_name` saying
 * what is wrong and what is allowed (`details.name` holds the refused name, JSON-quoted).
 */
export function checkArtifactName(name: unknown, rule: ArtifactNameRule = 'any'): string {
  const refuse = (why: string): never => {
    throw new AgentRxError('invalid_name', `invalid artifact name ${JSON.stringify(name)}: ${why}`, { name: JSON.stringify(name), rule });
  };
  if (typeof name !== 'string' || name.length === 0) return refuse('a name must be a non-empty string');
  if (name === '.' || name === '..') return refuse('"." and ".." name folders, not files');
  if (name.includes('/') || name.includes('\\')) return refuse('a name is one file name, without "/" or "\\" (artifacts have no folders)');
  if (CONTROL.test(name)) return refuse('control characters are not allowed');
  if (Buffer.byteLength(name, 'utf8') > MAX_ARTIFACT_NAME) return refuse(`a name is at most ${MAX_ARTIFACT_NAME} bytes`);
  if (rule === 'portable' && !PORTABLE_NAME.test(name)) return refuse('this host accepts only the characters A-Z a-z 0-9 . _ -');
  return name;
}
