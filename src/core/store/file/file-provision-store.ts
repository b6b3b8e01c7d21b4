import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentRxError } from '../../errors.js';
import { newestFirst, plainEntry, provisionEntryOf } from '../../provision/provision-entry.js';
import type { ProvisionBase, ProvisionEntry, ProvisionKey, ProvisionStore } from '../../provision/provision-store.js';
import { storeError } from './store-error.js';

/** The folder of the provision store inside a file store's `dir` (`%`: never a session folder's name). */
export const PROVISIONS_FOLDER = '%provisions';

/**
 * `name` as a file name that is the same on every file system: `[a-z0-9_-]` and inner dots are
 * kept, anything else (upper case too, for case-insensitive file systems; a leading dot) becomes
 * `%XX` of its UTF-8 bytes; a long result is cut and ends with a hash of the whole name. Not meant
 * to be decoded: every file also holds the names it stands for.
 */
export function safeFileName(name: string): string {
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[a-z0-9_-]/.test(c) || (c === '.' && out !== '') ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (out === '') return '%';
  return out.length <= 120 ? out : `${out.slice(0, 80)}~${createHash('sha256').update(name).digest('hex').slice(0, 32)}`;
}

/** What a tag file holds. */
interface TagFile {
  readonly base: string;
  readonly tag: string;
  readonly digest: string;
}

/**
 * The file engine's provision store, under `<dir>/%provisions/<provider>/<kind>/`: one JSON file
 * per entry (`entries/<digest>.json`) and one per tag (`tags/<base>/<tag>.json`, holding the base,
 * the tag and the digest), every name made safe by {@link safeFileName}. Each file is written
 * whole to a temp file that is renamed over it, so a reader sees the old or the new content and
 * two processes moving different tags never lose one. A file that is not what it should be is a
 * `store_error` naming it on `get`/`tags`, and left out of `list` through `onRepair`.
 */
export class FileProvisionStore implements ProvisionStore {
  private readonly root: string;

  constructor(
    dir: string,
    private readonly onRepair: (file: string, what: string) => void = () => undefined,
  ) {
    this.root = join(dir, PROVISIONS_FOLDER);
  }

  async get(key: ProvisionKey): Promise<ProvisionEntry | undefined> {
    const file = this.entryFile(key.provider, key.kind, key.digest);
    const text = await readIfThere(file, 'cannot read the provision entry');
    if (text === undefined) return undefined;
    const entry = provisionEntryOf(parseJson(text, file), file);
    return entry.digest === key.digest ? entry : undefined;
  }

  async put(entry: ProvisionEntry): Promise<void> {
    const file = this.entryFile(entry?.provider ?? '', entry?.kind ?? '', entry?.digest ?? '');
    await writeAtomically(file, JSON.stringify(plainEntry(entry, file)), 'cannot write the provision entry');
  }

  async evict(key: ProvisionKey): Promise<void> {
    await removeIfThere(this.entryFile(key.provider, key.kind, key.digest), 'cannot remove the provision entry');
  }

  async list(filter: { readonly provider: string; readonly kind: string; readonly base?: string }): Promise<ProvisionEntry[]> {
    const folder = join(this.kindFolder(filter.provider, filter.kind), 'entries');
    const out: ProvisionEntry[] = [];
    for (const name of await jsonFiles(folder, 'cannot list the provision entries')) {
      const file = join(folder, name);
      const text = await readIfThere(file, 'cannot read the provision entry');
      if (text === undefined) continue; // evicted meanwhile
      try {
        const entry = provisionEntryOf(parseJson(text, file), file);
        if (entry.provider === filter.provider && entry.kind === filter.kind && (filter.base === undefined || entry.base === filter.base)) out.push(entry);
      } catch (e) {
        this.onRepair(file, `left out of the provisions list: ${(e as Error).message}`);
      }
    }
    return out.sort(newestFirst);
  }

  async setTag(base: ProvisionBase, tag: string, digest: string): Promise<void> {
    const content: TagFile = { base: base.base, tag, digest };
    await writeAtomically(this.tagFile(base, tag), JSON.stringify(content), 'cannot write the tag');
  }

  async deleteTag(base: ProvisionBase, tag: string): Promise<void> {
    await removeIfThere(this.tagFile(base, tag), 'cannot remove the tag');
  }

  async tags(base: ProvisionBase): Promise<Readonly<Record<string, string>>> {
    const folder = this.tagFolder(base);
    const out: Record<string, string> = {};
    for (const name of await jsonFiles(folder, 'cannot list the tags')) {
      const file = join(folder, name);
      const text = await readIfThere(file, 'cannot read the tag');
      if (text === undefined) continue; // deleted meanwhile
      const t = parseJson(text, file) as Partial<TagFile> | null;
      if (typeof t?.tag !== 'string' || typeof t.digest !== 'string' || t.base !== base.base) {
        throw storeError(file, 'is not a tag file of this base ({ base, tag, digest }); delete it and set the tag again', undefined, { base: base.base });
      }
      out[t.tag] = t.digest;
    }
    return out;
  }

  private kindFolder(provider: string, kind: string): string {
    return join(this.root, safeFileName(provider), safeFileName(kind));
  }

  private entryFile(provider: string, kind: string, digest: string): string {
    return join(this.kindFolder(provider, kind), 'entries', `${safeFileName(digest)}.json`);
  }

  private tagFolder(base: ProvisionBase): string {
    return join(this.kindFolder(base.provider, base.kind), 'tags', safeFileName(base.base));
  }

  private tagFile(base: ProvisionBase, tag: string): string {
    return join(this.tagFolder(base), `${safeFileName(tag)}.json`);
  }
}

/** The text of `file`, or undefined when it does not exist. */
async function readIfThere(file: string, what: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw storeError(file, what, e);
  }
}

/** The `*.json` names in `folder` (none when it does not exist); temp files are not listed. */
async function jsonFiles(folder: string, what: string): Promise<string[]> {
  try {
    return (await readdir(folder)).filter((n) => n.endsWith('.json')).sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw storeError(folder, what, e);
  }
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw storeError(file, 'is not JSON; delete it (the next run provisions again)', e);
  }
}

/** Writes `text` to a temp file beside `file`, then renames it over `file` (folders made as needed). */
async function writeAtomically(file: string, text: string, what: string): Promise<void> {
  const tmp = `${file}.${randomUUID()}.tmp`;
  try {
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(tmp, text);
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw e instanceof AgentRxError ? e : storeError(file, what, e);
  }
}

async function removeIfThere(file: string, what: string): Promise<void> {
  try {
    await unlink(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw storeError(file, what, e);
  }
}
