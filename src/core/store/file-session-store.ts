import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { AgentRxError } from '../errors.js';
import type { SessionRecord, SessionStore } from './session-store.js';

/**
 * One JSON file per session in `dir`, written atomically (temp file + rename). A corrupt file is
 * reported through `onCorrupt`, renamed aside (`*.corrupt-<ts>`), and treated as absent.
 */
export class FileSessionStore implements SessionStore {
  constructor(
    private readonly dir: string,
    private readonly onCorrupt: (file: string, reason: string) => void = () => undefined,
  ) {}

  private fileOf(sessionId: string): string {
    return join(this.dir, `${encodeURIComponent(sessionId)}.json`);
  }

  async load(sessionId: string): Promise<SessionRecord | undefined> {
    const file = this.fileOf(sessionId);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new AgentRxError('store_error', `cannot read session record ${file}: ${(e as Error).message}`, undefined, { cause: e });
    }
    try {
      const parsed = JSON.parse(text) as SessionRecord;
      if (parsed?.version !== 1 || parsed.sessionId !== sessionId || !Array.isArray(parsed.ledger)) {
        throw new Error('not a version-1 session record for this session');
      }
      return parsed;
    } catch (e) {
      this.onCorrupt(file, (e as Error).message);
      await rename(file, `${file}.corrupt-${Date.now()}`).catch(() => undefined);
      return undefined;
    }
  }

  async save(record: SessionRecord): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = this.fileOf(record.sessionId);
    const tmp = `${file}.${randomUUID()}.tmp`;
    try {
      await writeFile(tmp, JSON.stringify(record), { encoding: 'utf8', flush: true });
      await rename(tmp, file);
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw new AgentRxError('store_error', `cannot write session record ${file}: ${(e as Error).message}`, undefined, { cause: e });
    }
  }

  async delete(sessionId: string): Promise<void> {
    await rm(this.fileOf(sessionId), { force: true });
  }
}
