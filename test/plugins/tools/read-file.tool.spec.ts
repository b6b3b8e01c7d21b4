import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { AgentRxError } from '../../../src/core/errors.js';
import type { ToolContext } from '../../../src/core/plugin/tool-handler.js';
import { ReadFileInput, ReadFileToolHandler } from '../../../src/plugins/tools/read-file.tool.js';
import { DEFAULT_READ_FILE_MAX_BYTES, resolveReadFileOptions } from '../../../src/plugins/tools/tools.config.js';
import { tempDir } from '../../support/temp-dir.js';

function contextWith(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { toolUseId: 'toolu_1', sessionId: 'sess_1', idempotencyKey: 'sess_1:toolu_1', signal, deadline: Date.now() + 60_000 };
}

/**
 * A temp tree, built once per file (every test only reads it):
 * ```
 * <tmp>/root/            the read_file root
 *   hello.txt  empty.txt  sub/nested.txt  sub/dir/  binary.bin  fifo
 *   link-inside -> hello.txt              link-outside -> ../outside/secret.txt
 *   dir-link-outside -> ../outside        loop -> loop
 * <tmp>/outside/secret.txt
 * <tmp>/root-evil/x.txt                   a sibling whose name starts with "root"
 * <tmp>/root-link -> root                 a root that is itself a symlink
 * ```
 */
let tmp: string;
let root: string;

beforeAll(async () => {
  tmp = await fs.realpath(await tempDir('agentrx-read-file-', { scope: 'file' }));
  root = path.join(tmp, 'root');
  await fs.mkdir(path.join(root, 'sub', 'dir'), { recursive: true });
  await fs.mkdir(path.join(tmp, 'outside'));
  await fs.mkdir(path.join(tmp, 'root-evil'));
  await fs.writeFile(path.join(root, 'hello.txt'), 'hello\nworld\n');
  await fs.writeFile(path.join(root, 'empty.txt'), '');
  await fs.writeFile(path.join(root, 'sub', 'nested.txt'), 'nested');
  await fs.writeFile(path.join(root, 'binary.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
  await fs.writeFile(path.join(tmp, 'outside', 'secret.txt'), 'secret');
  await fs.writeFile(path.join(tmp, 'root-evil', 'x.txt'), 'evil');
  await fs.symlink('hello.txt', path.join(root, 'link-inside'));
  await fs.symlink(path.join('..', 'outside', 'secret.txt'), path.join(root, 'link-outside'));
  await fs.symlink(path.join(tmp, 'outside'), path.join(root, 'dir-link-outside'));
  await fs.symlink('loop', path.join(root, 'loop'));
  await fs.symlink(root, path.join(tmp, 'root-link'));
  execFileSync('mkfifo', [path.join(root, 'fifo')]);
});

describe('ReadFileToolHandler', () => {
  describe('.handle', () => {
    describe('when called with a file inside the root', () => {
      it.each([
        ['hello.txt', 'hello\nworld\n'],
        ['./hello.txt', 'hello\nworld\n'],
        ['sub/nested.txt', 'nested'],
        ['sub/../hello.txt', 'hello\nworld\n'],
        ['sub/dir/../../sub/nested.txt', 'nested'],
        ['link-inside', 'hello\nworld\n'],
        ['empty.txt', ''],
      ])('should return the text of %j', async (requested, expected) => {
        await expect(new ReadFileToolHandler({ root }).handle({ path: requested }, contextWith())).resolves.toBe(expected);
      });
    });

    describe('when called, and the root itself is a symlink', () => {
      it('should read files under the link target', async () => {
        const handler = new ReadFileToolHandler({ root: path.join(tmp, 'root-link') });
        await expect(handler.handle({ path: 'sub/nested.txt' }, contextWith())).resolves.toBe('nested');
      });
    });

    describe('when called with a path that is refused', () => {
      it.each([
        ['an absolute path inside the root', () => path.join(root, 'hello.txt'), /is an absolute path/],
        ['a Windows absolute path', () => 'C:\\Windows\\win.ini', /is an absolute path/],
        ['a parent directory', () => '..', /leaves the root directory/],
        ['a `..` escape', () => '../outside/secret.txt', /leaves the root directory/],
        ['a `..` escape through a subdirectory', () => 'sub/../../outside/secret.txt', /leaves the root directory/],
        ['a sibling sharing the root name prefix', () => '../root-evil/x.txt', /leaves the root directory/],
        ['a symlink to a file outside', () => 'link-outside', /resolves to a location outside the root directory/],
        ['a path through a symlinked directory outside', () => 'dir-link-outside/secret.txt', /resolves to a location outside/],
        ['a symlink loop', () => 'loop', /symlink loop/],
        ['a missing file', () => 'missing.txt', /'missing\.txt' does not exist/],
        ['a path below a file', () => 'hello.txt/more', /does not exist/],
        ['a directory', () => 'sub', /'sub' is a directory/],
        ['the root itself', () => '.', /is a directory/],
        ['a FIFO', () => 'fifo', /'fifo' is not a regular file/],
        ['a binary file', () => 'binary.bin', /looks like a binary file/],
        ['a NUL character', () => 'hello.txt\0.png', /must not contain a NUL/],
      ])('should reject %s', async (_case, requested, message) => {
        const rejection = new ReadFileToolHandler({ root }).handle({ path: requested() }, contextWith());
        await expect(rejection).rejects.toThrow(message);
      });

      it.each([['../outside/secret.txt'], ['link-outside'], ['missing.txt'], ['sub']])('should not reveal where the root is for %j', async (requested) => {
        const error = await new ReadFileToolHandler({ root }).handle({ path: requested }, contextWith()).then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(error).toBeInstanceOf(Error);
        expect(error!.message).not.toContain(tmp);
      });
    });

    describe('when called with a file larger than maxBytes', () => {
      it.each([
        ['ASCII', 'a'.repeat(100), 64, 'a'.repeat(64), 100],
        ['2-byte characters cut mid-character', 'a' + 'é'.repeat(40), 64, 'a' + 'é'.repeat(31), 81],
        ['3-byte characters cut mid-character', 'ab' + '€'.repeat(30), 64, 'ab' + '€'.repeat(20), 92],
        ['4-byte characters cut mid-character', 'x' + '😀'.repeat(20), 64, 'x' + '😀'.repeat(15), 81],
        ['2-byte characters ending exactly at the limit', 'é'.repeat(40), 64, 'é'.repeat(32), 80],
      ])('should return the first bytes of %s with a truncation note', async (name, content, maxBytes, kept, total) => {
        const file = `big-${name.replaceAll(/\W+/g, '-')}.txt`;
        await fs.writeFile(path.join(root, file), content);
        const text = await new ReadFileToolHandler({ root, maxBytes }).handle({ path: file }, contextWith());
        const keptBytes = Buffer.byteLength(kept);
        expect(text).toBe(`${kept}\n[truncated: showing the first ${keptBytes} of ${total} bytes]`);
        expect(text).not.toContain('\uFFFD');
      });

      it('should not truncate a file of exactly maxBytes', async () => {
        await fs.writeFile(path.join(root, 'exact.txt'), 'z'.repeat(64));
        await expect(new ReadFileToolHandler({ root, maxBytes: 64 }).handle({ path: 'exact.txt' }, contextWith())).resolves.toBe('z'.repeat(64));
      });

      it('should read a file spanning several chunks up to the default limit', async () => {
        await fs.writeFile(path.join(root, 'large.txt'), 'q'.repeat(DEFAULT_READ_FILE_MAX_BYTES * 3));
        const text = await new ReadFileToolHandler({ root }).handle({ path: 'large.txt' }, contextWith());
        expect(text).toBe(
          `${'q'.repeat(DEFAULT_READ_FILE_MAX_BYTES)}\n[truncated: showing the first ${DEFAULT_READ_FILE_MAX_BYTES} of ${DEFAULT_READ_FILE_MAX_BYTES * 3} bytes]`,
        );
      });
    });

    describe('when called, and the signal is already aborted', () => {
      it('should reject with the abort reason', async () => {
        const controller = new AbortController();
        const reason = new Error('cancelled by test');
        controller.abort(reason);
        await expect(new ReadFileToolHandler({ root }).handle({ path: 'hello.txt' }, contextWith(controller.signal))).rejects.toBe(reason);
      });
    });

    describe('when called, and the root does not exist', () => {
      it('should reject with a clear error', async () => {
        const handler = new ReadFileToolHandler({ root: path.join(tmp, 'no-such-root') });
        await expect(handler.handle({ path: 'hello.txt' }, contextWith())).rejects.toThrow(/root directory of read_file does not exist/);
      });
    });
  });

  describe('constructor', () => {
    describe('when called with invalid options', () => {
      it.each([
        ['maxBytes 0', { root: '.', maxBytes: 0 }, ['maxBytes']],
        ['a fractional maxBytes', { root: '.', maxBytes: 1.5 }, ['maxBytes']],
        ['an empty root', { root: '' }, ['root']],
      ])('should throw invalid_options for %s', (_case, options, fields) => {
        let thrown: unknown;
        try {
          new ReadFileToolHandler(options);
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toBeInstanceOf(AgentRxError);
        expect((thrown as AgentRxError).code).toBe('invalid_options');
        expect((thrown as AgentRxError).details).toEqual({ fields });
      });
    });
  });
});

describe('resolveReadFileOptions', () => {
  describe('when called with a relative root and no maxBytes', () => {
    it('should make the root absolute and default maxBytes to 64 KiB', () => {
      expect(resolveReadFileOptions({ root: 'some/dir' })).toEqual({ root: path.resolve('some/dir'), maxBytes: 65_536 });
    });
  });
});

describe('ReadFileInput', () => {
  describe('when validated', () => {
    it.each([
      ['a missing path', {}],
      ['an empty path', { path: '' }],
      ['a non-string path', { path: ['a'] }],
      ['an over-long path', { path: 'a/'.repeat(2049) }],
    ])('should reject %s', (_case, input) => {
      expect(validateSync(plainToInstance(ReadFileInput, input)).map((e) => e.property)).toEqual(['path']);
    });

    it('should accept a relative path', () => {
      expect(validateSync(plainToInstance(ReadFileInput, { path: 'src/index.ts' }))).toEqual([]);
    });
  });
});
