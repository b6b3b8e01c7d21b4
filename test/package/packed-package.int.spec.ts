import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { installPackedPackage, lockedVersion, REPO, run, userEnv, type PackedProject, type Ran } from '../support/packed-package.js';
import { startOpenAiEmulator, type OpenAiEmulator, type OpenAiEmulatorOptions } from '../../src/testing/openai-emulator.js';
import { readmeSamples } from '../support/readme-samples.js';
import { describeWithRedis, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * The package as users install it: packed, installed into an empty project with only its required
 * dependencies (plus reflect-metadata and class-validator), and used there. No optional peer is
 * installed: each feature that needs one must say what to install in one line.
 */

let project: PackedProject;

beforeAll(async () => {
  project = await installPackedPackage(await tempDir('agentrx-packed-', { scope: 'file' }));
}, 300_000);

/** A module-resolution failure or a stack trace: what a user must never see for a missing peer. */
const STACK = /ERR_MODULE_NOT_FOUND|Cannot find (package|module)|\n\s+at /;

function expectOneLineNaming(r: Ran, packages: readonly string[]): void {
  expect(r.stderr).not.toMatch(STACK);
  const line = r.stderr.split('\n').find((l) => l.includes('npm install'));
  expect(line).toBeDefined();
  for (const p of packages) expect(line).toContain(p);
}

describe('the packed package', () => {
  describe('agentrx (the CLI)', () => {
    it('should print its version', async () => {
      const r = await project.agentrx(['--version']);
      expect(r).toMatchObject({ code: 0, stdout: `${lockedVersionOfSelf()}\n` });
    });

    const helps = [
      [],
      ['run'],
      ['tools'],
      ['demo'],
      ['serve'],
      ['sessions'],
      ['sessions', 'ls'],
      ['sessions', 'show'],
      ['sessions', 'export'],
      ['replay'],
      ['worker'],
      ['workers'],
    ].map((c) => [[...c, '--help'].join(' '), [...c, '--help']] as const);
    it.each(helps)('should print `agentrx %s` and exit 0', async (_name, args) => {
      const r = await project.agentrx(args);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: agentrx/);
    });

    it('should run the demo session on the embedded demo model', async () => {
      const r = await project.agentrx(['demo']);
      expect(r.stderr).not.toMatch(STACK);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Summary: I used 3 tools (get_time, calculate, read_file)');
      expect(r.stdout).toMatch(/✓ end_turn · turns 2 · tool calls 3/);
    });
  });

  describe('agentrx with its output piped into a reader that stops early (agentrx … | head)', () => {
    it('should end quietly with exit 0', async () => {
      const model = await startOpenAiEmulator({ model: 'demo' });
      const args = [
        'run',
        '--json',
        '--demo-tools',
        '--base-url',
        model.baseUrl,
        '--store',
        join(project.dir, 'sessions'),
        'what time is it, and what is 2 + 2?',
      ];
      const child = spawn(join(project.dir, 'node_modules', '.bin', 'agentrx'), args, { cwd: project.dir, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.stdout.once('data', () => child.stdout.destroy());
      const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
      await model.close();
      expect(stderr).not.toMatch(/EPIPE|\n\s+at /);
      expect(code).toBe(0);
    });
  });

  describe('the entry points', () => {
    it.each(['agentrx', 'agentrx/testing', 'agentrx/distributed'])('should import %s without any optional peer', async (entry) => {
      const r = await project.node([
        '--input-type=module',
        '-e',
        `import 'reflect-metadata'; const m = await import('${entry}'); console.log(Object.keys(m).length);`,
      ]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(Number(r.stdout.trim())).toBeGreaterThan(0);
    });

    it('should load no axios, no AG-UI encoder, no JSON Patch, neither the index of class-validator nor of rxjs, and no CommonJS module through the ES loader, for import + AgentRx.create (Local)', async () => {
      // A module hook reports the ES modules loaded; the CommonJS ones are in the require cache.
      project.write(
        'load-hook.mjs',
        'export async function initialize({ port }) { globalThis.port = port; }\n' +
          'export async function load(url, context, next) { globalThis.port.postMessage(url); return next(url, context); }\n',
      );
      project.write(
        'light.mjs',
        [
          "import { createRequire, register } from 'node:module';",
          "import { MessageChannel } from 'node:worker_threads';",
          'const { port1, port2 } = new MessageChannel();',
          'const loaded = [];',
          'let sentinel = () => {};',
          'const seen = new Promise((resolve) => (sentinel = resolve));',
          "port1.on('message', (url) => (url.startsWith('data:') ? sentinel() : loaded.push(url)));",
          "register('./load-hook.mjs', import.meta.url, { data: { port: port2 }, transferList: [port2] });",
          "await import('reflect-metadata/lite');",
          "const { AgentRx } = await import('agentrx');",
          "const rx = await AgentRx.create({ config: { provider: 'local', consumers: { terminal: false }, providers: { local: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } } } });",
          'await rx.stop();',
          // The hook reports in load order: once this module's load arrives, every earlier one has.
          "await import('data:text/javascript,export default 0');",
          'await seen;',
          'port1.close();',
          "const packages = (urls) => urls.filter((u) => u.includes('/node_modules/')).map((u) => u.replace(/^.*\\/node_modules\\//, ''));",
          'console.log(JSON.stringify({ esm: packages(loaded), cjs: packages(Object.keys(createRequire(import.meta.url).cache)) }));',
        ].join('\n'),
      );
      const r = await project.node(['light.mjs']);
      expect(r.stderr).toBe('');
      const { esm, cjs } = JSON.parse(r.stdout.trim()) as { esm: string[]; cjs: string[] };
      const loaded = [...esm, ...cjs];
      // Through the ES loader only ES modules (and the host's own reflect-metadata): a CommonJS
      // package imported from an ES module costs a lexer pass, so agentrx requires those.
      expect(esm.filter((u) => !/^(agentrx\/dist|eventsource-parser\/dist)\/.*\.js$/.test(u) && u !== 'reflect-metadata/ReflectLite.js')).toEqual([]);
      expect(loaded).toEqual(
        expect.arrayContaining([expect.stringMatching(/^agentrx\/dist\/index\.js$/), expect.stringMatching(/^class-validator\/cjs\/decorator\//)]),
      );
      expect(
        loaded.filter(
          (u) =>
            /^(axios|form-data|proxy-from-env|@ag-ui\/core|fast-json-patch)\//.test(u) ||
            /^(class-validator\/cjs|rxjs\/dist\/cjs)\/index\.js$/.test(u) ||
            u.startsWith('libphonenumber-js/') ||
            u === 'reflect-metadata/Reflect.js',
        ),
      ).toEqual([]);
    });

    it("should take a host's classes and modules made with its own inversify (agentrx bundles its copy)", async () => {
      // inversify is installed with agentrx (its types); the host decorates with that copy.
      project.write(
        'host-inversify.mjs',
        [
          "import 'reflect-metadata';",
          "import { ContainerModule, inject, injectable } from 'inversify';",
          "import { AgentRx } from 'agentrx';",
          "const Greeting = Symbol.for('host.greeting');",
          'class Greeter {',
          '  constructor(greeting) { this.greeting = greeting; }',
          "  name = 'greet';",
          "  description = 'Greets someone.';",
          "  inputSchema = { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] };",
          '  handle(input) { return `${this.greeting}, ${input.who}`; }',
          '}',
          'injectable()(Greeter);',
          'inject(Greeting)(Greeter, undefined, 0);',
          'const rx = await AgentRx.create({',
          "  config: { provider: 'local', consumers: { terminal: false }, providers: { local: { baseUrl: process.env.MODEL_URL, model: 'scripted' } } },",
          "  modules: [new ContainerModule(({ bind }) => { bind(Greeting).toConstantValue('Hello'); })],",
          '  tools: [Greeter],',
          '});',
          "const result = await rx.run({ prompt: 'greet Ada' });",
          'console.log(result.text);',
          'await rx.stop();',
        ].join('\n'),
      );
      const model = await startOpenAiEmulator({ script: [{ toolCalls: [{ name: 'greet', arguments: { who: 'Ada' } }] }, { text: 'Done.' }] });
      try {
        const r = await project.node(['host-inversify.mjs'], { env: { MODEL_URL: model.baseUrl } });
        expect(r.stderr).toBe('');
        expect(r.stdout).toBe('Done.\n');
        expect(JSON.stringify(model.requests[1]?.body)).toContain('Hello, Ada');
      } finally {
        await model.close();
      }
    });

    it('should refuse agentrx/nest without Nest in one line naming what to install', async () => {
      const r = await project.node([
        '--input-type=module',
        '-e',
        "import 'reflect-metadata'; try { await import('agentrx/nest'); } catch (e) { console.error(e.message); process.exit(2); }",
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe('agentrx/nest needs the optional package @nestjs/common: npm install @nestjs/common @nestjs/core @nestjs/platform-express');
    });
  });

  describe('its package.json', () => {
    it('should declare every package its code imports: a dependency, or an optional peer (rxjs: a required peer)', () => {
      const root = join(project.dir, 'node_modules', 'agentrx');
      const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
        peerDependencies: Record<string, string>;
        peerDependenciesMeta: Record<string, { optional?: boolean }>;
      };
      const imported = new Set<string>();
      const packageOf = (specifier: string): string => (specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
      const walk = (dir: string): void => {
        for (const e of readdirSync(dir, { withFileTypes: true })) {
          if (e.isDirectory()) walk(join(dir, e.name));
          else if (e.name.endsWith('.js')) {
            // The bundle's imports (either quote, minified or not), dynamic imports, and what it
            // loads through createRequire: `createRequire(…)("pkg")`, and calls of a name bound to
            // one (the shims' `load(`pkg/…`)`, whatever the minifier renamed `load` to; a minified
            // name is reused in other scopes, so those count only when the package is installed).
            const text = readFileSync(join(dir, e.name), 'utf8');
            const spec = String.raw`["'\`]((?:@[\w.-]+\/)?[a-z][\w.-]*(?:\/[\w.-]+)*)(?:["'\`]|\/\$\{)`;
            const found = [...text.matchAll(new RegExp(String.raw`(?:\bfrom\s*|\bimport\s*\(\s*|^import\s*|\)\(\s*)` + spec, 'gm'))].map((m) => m[1]!);
            for (const [, name] of text.matchAll(/([\w$]+)=createRequire\(import\.meta\.url\)/g)) {
              const called = [...text.matchAll(new RegExp(String.raw`(?<![\w$.])${name!.replaceAll('$', '\\$')}\(\s*` + spec, 'g'))].map((m) => m[1]!);
              found.push(...called.filter((p) => existsSync(join(project.dir, 'node_modules', packageOf(p), 'package.json'))));
            }
            for (const p of found) {
              if (p.startsWith('node:')) continue;
              imported.add(packageOf(p));
            }
          }
        }
      };
      walk(join(root, 'dist'));
      // The scan sees static, lazy and required imports alike (inversify is bundled into dist/; its
      // types still come from the dependency).
      expect([...imported]).toEqual(
        expect.arrayContaining([
          'rxjs',
          'axios',
          'class-validator',
          'class-validator-jsonschema',
          'bullmq',
          'ioredis',
          '@aws-sdk/client-bedrock-agentcore',
          '@nestjs/common',
        ]),
      );
      expect([...imported]).not.toContain('inversify');
      const undeclared = [...imported].filter((name) => !(name in pkg.dependencies) && !(name in pkg.peerDependencies));
      expect(undeclared).toEqual([]);
      const requiredPeers = Object.keys(pkg.peerDependencies).filter((name) => pkg.peerDependenciesMeta[name]?.optional !== true);
      expect(requiredPeers).toEqual(['rxjs']);
      expect(pkg.peerDependencies['zod']).toBe('^4.2.0');
    });
  });

  describe('a feature whose optional peer is missing', () => {
    const redis = { store: { type: 'redis', url: 'redis://127.0.0.1:1' } };

    it('should refuse the Redis store with one line and exit 2', async () => {
      project.write('redis.json', JSON.stringify(redis));
      const r = await project.agentrx(['run', '-c', 'redis.json', 'hello']);
      expect(r.code).toBe(2);
      expectOneLineNaming(r, ['ioredis']);
    });

    it.each([
      ['worker', ['worker', '-c', 'pool.json']],
      ['workers', ['workers', '-c', 'pool.json']],
      ['serve', ['serve', '-c', 'pool.json', '--port', '0']],
    ])('should refuse distributed mode (agentrx %s) with one line and exit 2', async (_name, args) => {
      project.write('pool.json', JSON.stringify({ ...redis, runtime: { mode: 'distributed' } }));
      const r = await project.agentrx(args);
      expect(r.code).toBe(2);
      expectOneLineNaming(r, ['ioredis']);
    });

    it('should refuse MCP servers with one line and exit 2', async () => {
      const r = await project.agentrx(['tools', '--mcp', `files=${process.execPath} -e 0`]);
      expect(r.code).toBe(2);
      expectOneLineNaming(r, ['@modelcontextprotocol/sdk']);
    });

    it('should refuse the bedrock-agentcore provider with one line and exit 2', async () => {
      project.write(
        'agentcore.json',
        JSON.stringify({
          provider: 'bedrock-agentcore',
          providers: {
            'bedrock-agentcore': {
              region: 'us-east-1',
              harnessArn: 'arn:aws:bedrock-agentcore:us-east-1:123456789012:harness/h-1',
              endpoint: 'http://127.0.0.1:1',
            },
          },
        }),
      );
      const r = await project.agentrx(['run', '-c', 'agentcore.json', 'hello'], {
        env: { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'example-secret' },
      });
      expect(r.code).toBe(2);
      expectOneLineNaming(r, ['@aws-sdk/client-bedrock-agentcore']);
      expect(r.stderr).not.toContain('example-secret');
    });
  });

  describe("a user's TypeScript with the README's tsconfig", () => {
    beforeAll(async () => {
      await project.add([`typescript@${lockedVersion('typescript')}`, `@types/node@${lockedVersion('@types/node')}`]);
    }, 300_000);

    it('should typecheck against every documented entry point without any optional peer installed (no skipLibCheck)', async () => {
      project.write('tsconfig.json', readmeTsconfig());
      project.write(
        'entry-points.ts',
        [
          "import 'reflect-metadata';",
          "import { AgentRx, defineTool, type SessionResult } from 'agentrx';",
          "import { startOpenAiEmulator, ScriptedProvider } from 'agentrx/testing';",
          "import { startWorker, PoolMonitor, type SessionWorkerOptions, type PoolStatus } from 'agentrx/distributed';",
          'const tool = defineTool({ name: "echo", description: "Echoes.", inputSchema: { type: "object", properties: { text: { type: "string" } } }, handle: (input: unknown) => JSON.stringify(input) });',
          'export const used: unknown[] = [AgentRx, tool, startOpenAiEmulator, ScriptedProvider, startWorker, PoolMonitor];',
          'export type Used = [SessionResult, SessionWorkerOptions, PoolStatus];',
          '// A typo in the provider id does not compile; a plugin provider is named as the type argument.',
          "// @ts-expect-error: 'locl' is no provider id (tsc fails on an unused expect-error, so this checks it)",
          "export const typo = () => AgentRx.create({ config: { provider: 'locl' } });",
          "export const plugin = () => AgentRx.create<'my-host'>({ config: { provider: 'my-host' } });",
          '',
        ].join('\n'),
      );
      const r = await run(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', '.', '--noEmit'], { cwd: project.dir });
      expect(r.stdout + r.stderr).toBe('');
      expect(r.code).toBe(0);
    }, 120_000);
  });

  describe("the README's code samples, run as a user runs them", () => {
    const samples = readmeSamples();
    const byName = new Map(samples.map((x) => [x.name, x]));
    /** Where each runnable sample's compiled program is (TypeScript: out/samples/<name>.js). */
    const program = (name: string): string => (byName.get(name)!.lang === 'js' ? `samples/${name}.mjs` : join('out', 'samples', `${name}.js`));
    let model: OpenAiEmulator | undefined;

    beforeAll(async () => {
      // What the samples' own comments say to install.
      await project.add([`zod@${lockedVersion('zod')}`, `typescript@${lockedVersion('typescript')}`, `@types/node@${lockedVersion('@types/node')}`]);
      project.write('tsconfig.json', readmeTsconfig());
      for (const x of samples) if (!x.fragment) project.write(`samples/${x.name}.${x.lang === 'js' ? 'mjs' : 'ts'}`, x.code);
      const r = await run(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', '.', '--rootDir', '.', '--outDir', 'out'], {
        cwd: project.dir,
      });
      if (r.code !== 0) throw new Error(`the README's TypeScript samples do not compile with its tsconfig:\n${r.stdout}${r.stderr}`);
    }, 300_000);

    afterEach(async () => {
      await model?.close();
      model = undefined;
    });

    /** Runs a sample with MODEL_URL pointing at a scripted emulator (or the demo model). */
    async function runSample(name: string, script: OpenAiEmulatorOptions['script'] | 'demo'): Promise<{ r: Ran; model: OpenAiEmulator }> {
      model = await startOpenAiEmulator(script === 'demo' ? { model: 'demo' } : { script });
      const r = await project.node([program(name)], { env: { MODEL_URL: model.baseUrl } });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      return { r, model };
    }

    it('should know every sample the README marks', () => {
      expect(samples.map((x) => x.name).sort()).toEqual([
        'artifacts',
        'config-module',
        'event-consumer',
        'nest',
        'provisioning',
        'replay',
        'scale-out',
        'structured-output',
        'testing',
        'tools-without-classes',
        'use-from-code',
      ]);
      expect(samples.filter((x) => x.fragment).map((x) => x.name)).toEqual(['nest']);
    });

    it('use-from-code: should run the tool, print the answer with its 2 turns, then answer the live session and its queued message before closing', async () => {
      const { r, model: m } = await runSample('use-from-code', [
        { toolCalls: [{ name: 'get_weather', arguments: { city: 'Lisbon' } }] },
        { text: 'Lisbon: 21 °C and sunny.' },
        { text: 'Hello! How can I help?' },
        { text: 'Tomorrow: 23 °C.' },
      ]);
      expect(r.stdout).toMatch(/^Lisbon: 21 °C and sunny\. 2 \{/m);
      expect(r.stdout).toContain('Hello! How can I help?\n');
      expect(r.stdout).toContain('Tomorrow: 23 °C.\n');
      expect(r.stdout.match(/^RUN_FINISHED$/gm)).toHaveLength(2);
      expect(JSON.stringify(m.requests[1]?.body)).toContain(JSON.stringify(JSON.stringify({ city: 'Lisbon', tempC: 21 })).slice(1, -1));
    });

    it('structured-output: should send the schema as response_format and print the typed output', async () => {
      const { r, model: m } = await runSample('structured-output', [{ text: '{"expression":"(17 + 25) * 3","total":126}' }]);
      expect(r.stdout).toBe('(17 + 25) * 3 = 126\n');
      expect(m.requests[0]?.body).toMatchObject({ temperature: 0, response_format: { type: 'json_schema', json_schema: { name: 'output' } } });
    });

    it('event-consumer: should see the tool call, the streamed text and one stop per session', async () => {
      const { r } = await runSample('event-consumer', [{ toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] }, { text: 'It is 42.' }]);
      expect(r.stdout).toMatch(/^\[\s*'[^']+: calculate \(call_e0_0\)'\s*\] It is 42\. \[ '[^']+: completed' \]\n$/);
    });

    it('provisioning: should make three versions, resolve the tag to the first, and name the one prune would archive', async () => {
      const r = await project.node([program('provisioning')]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^support:prod -> (support_[0-9a-f]{8})\nwould archive: (support_[0-9a-f]{8})\n$/);
      const [, tagged, archived] = /^support:prod -> (\S+)\nwould archive: (\S+)\n$/.exec(r.stdout)!;
      expect(archived).not.toBe(tagged);
    });

    it('artifacts: should put, list, fetch and delete a file of a session', async () => {
      const r = await project.node([program('artifacts')]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('put hello.txt (19 bytes)\nlist: hello.txt (19 bytes)\nfetch: Hello from agentrx!\ndelete: done; 0 artifacts left\n');
    });

    it('config-module: should bind the validated section, and the tool should use it', async () => {
      const { r, model: m } = await runSample('config-module', [{ toolCalls: [{ name: 'greet', arguments: { name: 'Ana' } }] }, { text: 'Done.' }]);
      expect(r.stdout).toBe('Done.\n');
      expect(JSON.stringify(m.requests[1]?.body)).toContain('Olá, Ana! Olá, Ana!');
    });

    it('tools-without-classes: should run the JSON Schema tool and the zod tool (its default applied)', async () => {
      const { r, model: m } = await runSample('tools-without-classes', [
        {
          toolCalls: [
            { name: 'lookup', arguments: { word: 'idempotent' } },
            { name: 'forecast', arguments: { city: 'Oslo' } },
          ],
        },
        { text: 'Safe to repeat; rain in Oslo.' },
      ]);
      expect(r.stdout).toBe('Safe to repeat; rain in Oslo.\n');
      const sent = JSON.stringify(m.requests[1]?.body);
      expect(sent).toContain('safe to repeat');
      expect(sent).toContain('Oslo: rain for 3 days');
    });

    it('replay: should play the recording back with the tool run for real and no mismatch', async () => {
      model = await startOpenAiEmulator({ model: 'demo' });
      const rec = await project.agentrx([
        'run',
        'what is (17 + 25) * 3',
        '--demo-tools',
        '--record',
        'session.json',
        '--base-url',
        model.baseUrl,
        '--store',
        'sessions',
      ]);
      expect(rec.code).toBe(0);
      const r = await project.node([program('replay')]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('calculate returned: "(17 + 25) * 3 = 126"');
      expect(r.stdout.trimEnd()).toMatch(/ \[\]$/);
    });

    it('testing: should run the tool against the scripted emulator and answer as scripted', async () => {
      const r = await project.node([program('testing')]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('Lisbon: 21 °C. 2\n2\n');
    });

    describeWithRedis('scale-out (with Redis, ioredis, bullmq and a worker)', () => {
      let redis: RedisServer | undefined;
      let worker: ChildProcess | undefined;

      afterAll(async () => {
        worker?.kill('SIGTERM');
        if (worker && worker.exitCode === null) await once(worker, 'exit');
        await redis?.stop();
      });

      it('should submit to the pool, answer the follow-up, and close the session', async () => {
        await project.add([`ioredis@${lockedVersion('ioredis')}`, `bullmq@${lockedVersion('bullmq')}`]);
        redis = await startRedisServer();
        model = await startOpenAiEmulator({ model: 'demo' });
        project.write(
          'pool.json',
          JSON.stringify({
            provider: 'local',
            providers: { local: { baseUrl: model.baseUrl, model: 'demo' } },
            store: { type: 'redis', url: redis.url },
            runtime: { mode: 'distributed' },
          }),
        );
        worker = spawn(join(project.dir, 'node_modules', '.bin', 'agentrx'), ['worker', '-c', 'pool.json'], {
          cwd: project.dir,
          env: userEnv(),
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        const r = await project.node([program('scale-out')], { env: { REDIS_URL: redis.url } });
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        expect(r.stdout).toContain('You said: "Summarise the report"');
        expect(r.stdout).toContain('You said: "and in French?"');
      }, 120_000);
    });
  });
});

/** The README's TypeScript settings block, exactly as printed. */
export function readmeTsconfig(): string {
  const readme = fsRead(join(REPO, 'README.md'));
  const m = /\*\*TypeScript settings\.\*\*[\s\S]*?```json\n([\s\S]*?)\n```/.exec(readme);
  if (!m) throw new Error('README.md has no TypeScript settings block');
  return m[1]!;
}

function lockedVersionOfSelf(): string {
  return (JSON.parse(fsRead(join(REPO, 'package.json'))) as { version: string }).version;
}

function fsRead(path: string): string {
  return readFileSync(path, 'utf8');
}
