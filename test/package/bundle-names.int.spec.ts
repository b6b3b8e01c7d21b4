import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO } from '../support/packed-package.js';

/**
 * The built package (dist/, as `npm test` builds it) keeps the names of its classes and top-level
 * functions, and names no closure at run time (scripts/bundle-names.mjs): the build's keepNames
 * helper redefines `name` with Object.defineProperty, which is counted here from before the
 * package loads.
 */
const PROBE = `
const define = Object.defineProperty;
const named = [];
let counting = false;
Object.defineProperty = function (target, key, desc) {
  if (counting && typeof target === 'function' && key === 'name') named.push(desc.value);
  return define.call(Object, target, key, desc);
};
const { AgentRx, AgentRxError, defineTool } = await import(${JSON.stringify(join(REPO, 'dist/index.js'))});
const { startOpenAiEmulator } = await import(${JSON.stringify(join(REPO, 'dist/testing/index.js'))});
const echo = defineTool({
  name: 'echo',
  description: 'Echoes.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  handle: ({ text }) => text.toUpperCase(),
});
const turns = [{ toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] }, { text: 'done' }];
const emulator = await startOpenAiEmulator({ script: [...turns, ...turns] });
const rx = await AgentRx.create({
  tools: [echo],
  config: { provider: 'local', consumers: { terminal: false }, providers: { local: { baseUrl: emulator.baseUrl, model: 'm' } } },
});
const first = await rx.run({ prompt: 'one' });
counting = true;
const second = await rx.run({ prompt: 'two' });
counting = false;
await rx.stop();
await emulator.close();
let configError;
try {
  await AgentRx.create({ config: { provider: 'nope' } });
} catch (e) {
  configError = e;
}
console.log(JSON.stringify({
  texts: [first.text, second.text],
  named,
  classes: [AgentRx.name, AgentRxError.name, configError.constructor.name],
  functions: [defineTool.name],
}));
`;

function probe(): Promise<{ texts: string[]; named: string[]; classes: string[]; functions: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', PROBE], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`probe exited ${code}: ${err}`));
      else resolve(JSON.parse(out.trim().split('\n').pop()!));
    });
  });
}

describe('the built package (dist/)', () => {
  it('should run a Local session with a tool without naming a single function, and keep the names of its classes and top-level functions', async () => {
    const r = await probe();
    expect(r.texts).toEqual(['done', 'done']);
    expect(r.named).toEqual([]);
    expect(r.classes).toEqual(['AgentRx', 'AgentRxError', 'AgentRxError']);
    expect(r.functions).toEqual(['defineTool']);
  }, 60_000);
});
