import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import {
  CONTROL_SDK_PACKAGE,
  DATA_SDK_PACKAGE,
  loadControlSdk,
  loadDataSdk,
  loadSdk,
} from '../../../../src/plugins/providers/bedrock-agentcore/agentcore-sdk.js';
import { failure } from '../../../fakes/failure.js';

const SRC = join(process.cwd(), 'src');

async function tsFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await tsFiles(path)));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Static (value) imports and re-exports of `@aws-sdk/*` and `@smithy/*`; `import type` is erased and allowed. */
function staticSdkImports(text: string): string[] {
  const found: string[] = [];
  const re = /^\s*(import|export)\s+(?!type\b)[^;]*?from\s+['"](@aws-sdk\/[^'"]+|@smithy\/[^'"]+)['"]/gm;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) found.push(m[2]!);
  const bare = /^\s*import\s+['"](@aws-sdk\/[^'"]+|@smithy\/[^'"]+)['"]/gm;
  for (let m = bare.exec(text); m !== null; m = bare.exec(text)) found.push(m[1]!);
  return found;
}

describe('the AWS SDK is optional (issue 16, first use)', () => {
  it('should be imported statically nowhere in src but the AgentCore emulator', async () => {
    const offenders: string[] = [];
    for (const file of await tsFiles(SRC)) {
      const rel = relative(SRC, file).split('\\').join('/');
      if (rel === 'testing/agentcore-emulator.ts' || rel.startsWith('testing/agentcore-emulator/')) continue;
      for (const pkg of staticSdkImports(await readFile(file, 'utf8'))) offenders.push(`${rel}: ${pkg}`);
    }
    expect(offenders).toEqual([]);
  });

  it('should tell a static import from a type-only one', () => {
    expect(
      staticSdkImports(
        "import { X } from '@aws-sdk/client-x';\nimport type { Y } from '@aws-sdk/client-y';\nexport { Z } from '@smithy/z';\nimport '@aws-sdk/side-effect';",
      ),
    ).toEqual(['@aws-sdk/client-x', '@smithy/z', '@aws-sdk/side-effect']);
  });

  describe('loadSdk', () => {
    it('should fail with invalid_config saying what to install when the package is missing', async () => {
      const missing = '@aws-sdk/client-agentrx-not-installed';
      const err = await failure(loadSdk(DATA_SDK_PACKAGE, () => import(missing)));
      expect(err.code).toBe('invalid_config');
      expect(err.message).toBe(
        `the bedrock-agentcore provider needs the optional package ${DATA_SDK_PACKAGE}: npm install ${DATA_SDK_PACKAGE} ${CONTROL_SDK_PACKAGE}`,
      );
      expect(err.details).toMatchObject({ package: DATA_SDK_PACKAGE });
    });

    it('should report another import failure as provider_error with its reason', async () => {
      const err = await failure(loadSdk(CONTROL_SDK_PACKAGE, () => Promise.reject(new TypeError('broken build'))));
      expect(err).toMatchObject({ code: 'provider_error', message: `loading ${CONTROL_SDK_PACKAGE} failed: broken build` });
    });

    it('should not cache a failed import (installing the package and retrying works)', async () => {
      const gone = Object.assign(new Error('Cannot find package'), { code: 'ERR_MODULE_NOT_FOUND' });
      await expect(loadControlSdk(() => Promise.reject(gone))).rejects.toMatchObject({ code: 'invalid_config' });
      const sdk = await loadControlSdk();
      expect(typeof sdk.CreateHarnessCommand).toBe('function');
      expect(typeof (await loadDataSdk()).InvokeHarnessCommand).toBe('function');
    });
  });
});
