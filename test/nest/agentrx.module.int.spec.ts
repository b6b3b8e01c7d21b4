import { jest } from '@jest/globals';
import { Inject, Injectable, Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import { AgentRx, type AgentRxConfigInput } from '../../src/agentrx.js';
import { DEMO_PROMPT } from '../../src/cli/cli.js';
import type { SessionResult } from '../../src/core/model.js';
import type { ToolHandler } from '../../src/core/plugin/tool-handler.js';
import { isAgentRxError } from '../../src/core/errors.js';
import { AGENTRX, AGENTRX_AGUI_HANDLER, AgentRxModule } from '../../src/nest/index.js';
import { demoToolsModule } from '../../src/plugins/tools/tools.module.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../src/testing/openai-emulator.js';
import { RecordingConsumer } from '../../src/testing/recording-consumer.js';
import { EchoToolHandler, resetFakeTools } from '../fakes/fake-tools.js';
import type { AgUiHttpHandler } from '../../src/servers/agui-http/agui-http.handler.js';

/** A host service that gets the facade from Nest. */
@Injectable()
class AskService {
  constructor(
    @Inject(AGENTRX) readonly rx: AgentRx,
    readonly byClass: AgentRx,
  ) {}

  ask(prompt: string): Promise<SessionResult> {
    return this.rx.run({ prompt });
  }
}

/** A Nest-side dependency the async factory reads. */
const SETTINGS = Symbol('SETTINGS');
interface Settings {
  readonly baseUrl: string;
  readonly suffix: string;
}

class ShoutInput {
  @IsString()
  text!: string;
}

/** A tool instance built by the host from a Nest provider (not by inversify). */
class ShoutTool implements ToolHandler<ShoutInput> {
  readonly name = 'shout';
  readonly description = 'Shouts.';
  readonly inputType = ShoutInput;
  constructor(private readonly suffix: string) {}
  handle(input: ShoutInput): string {
    return `${input.text.toUpperCase()}${this.suffix}`;
  }
}

const localConfig = (baseUrl: string): AgentRxConfigInput => ({
  provider: 'local',
  providers: { local: { baseUrl, model: 'agentrx-demo', maxRetries: 0 } },
  limits: { runTimeoutMs: 10_000 },
});

/** Reads an SSE body to its end and returns the AG-UI event types, in order. */
async function sseTypes(res: Response): Promise<string[]> {
  const text = await res.text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => (JSON.parse(l.slice(5)) as { type: string }).type);
}

const runInput = (threadId: string, prompt: string): object => ({
  threadId,
  runId: `${threadId}-r1`,
  state: {},
  messages: [{ id: 'u1', role: 'user', content: prompt }],
  tools: [],
  context: [],
  forwardedProps: {},
});

describe('AgentRxModule', () => {
  let emulator: OpenAiEmulator;
  let app: INestApplication | undefined;
  beforeEach(() => resetFakeTools());
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await emulator?.close();
  });

  describe('.forRoot', () => {
    describe('when a host service runs the demo session through the injected facade', () => {
      let service: AskService;
      let recording: RecordingConsumer;
      let result: SessionResult;
      beforeEach(async () => {
        emulator = await startOpenAiEmulator({ model: 'demo' });
        recording = new RecordingConsumer();
        const moduleRef = await Test.createTestingModule({
          imports: [
            AgentRxModule.forRoot({ config: localConfig(emulator.baseUrl), modules: [demoToolsModule], tools: [EchoToolHandler], consumers: [recording] }),
          ],
          providers: [AskService],
        }).compile();
        app = moduleRef.createNestApplication({ logger: false });
        await app.init();
        service = app.get(AskService);
        result = await service.ask(DEMO_PROMPT);
      });

      it('should run the session and inject one facade under AGENTRX and the AgentRx class', () => {
        expect(result).toMatchObject({ terminal: 'end_turn', turns: 2 });
        expect(result.text).toContain('126');
        expect(service.rx).toBeInstanceOf(AgentRx);
        expect(service.byClass).toBe(service.rx);
        expect(app!.get(AGENTRX)).toBe(service.rx);
      });

      it('should register the host tools and consumers in the facade container', () => {
        expect(service.rx.pluginIds.tools.sort()).toEqual(['calculate', 'echo', 'get_time', 'read_file']);
        expect(service.rx.pluginIds.consumers).toEqual(['recording']);
        expect(recording.events.at(-1)!.type).toBe('RUN_FINISHED');
        expect(recording.stops).toEqual(['completed']);
      });

      it('should stop the facade exactly once when the app closes, cancelling live sessions', async () => {
        const rx = service.rx;
        const stop = jest.spyOn(rx, 'stop');
        const live = rx.start({ prompt: 'hello' });
        const ended = new Promise<unknown>((resolve) => live.results$.subscribe({ complete: () => resolve('complete'), error: resolve }));
        await new Promise<void>((resolve) => live.results$.subscribe({ next: () => resolve(), error: () => undefined }));

        await app!.close();
        await app!.close();
        app = undefined;

        expect(stop).toHaveBeenCalledTimes(1);
        expect(recording.stops).toEqual(['completed', 'cancelled']);
        // A shutdown is not a failure: results$ completes; result tells it was cancelled.
        await expect(ended).resolves.toBe('complete');
        await expect(live.result).resolves.toMatchObject({ terminal: 'end_turn' });
        let refused: unknown;
        try {
          rx.start({ prompt: 'again' });
        } catch (e) {
          refused = e;
        }
        expect(isAgentRxError(refused) && refused.code).toBe('session_closed');
      });
    });

    describe('when the config is invalid', () => {
      it('should fail the app start with invalid_config', async () => {
        const moduleRef = await Test.createTestingModule({ imports: [AgentRxModule.forRoot({ config: { provider: 'local', limits: { maxTurns: -1 } } })] })
          .compile()
          .catch((e: unknown) => e);
        expect(isAgentRxError(moduleRef) && moduleRef.code).toBe('invalid_config');
      });
    });
  });

  describe('.forRootAsync', () => {
    describe('when the factory builds the options from an imported Nest provider, with a tool instance', () => {
      it('should build the facade from them and run the host tool instance', async () => {
        emulator = await startOpenAiEmulator({ script: [{ toolCalls: [{ id: 'c1', name: 'shout', arguments: { text: 'hi' } }] }, { text: 'done' }] });
        @Module({ providers: [{ provide: SETTINGS, useValue: { baseUrl: emulator.baseUrl, suffix: '!!' } satisfies Settings }], exports: [SETTINGS] })
        class SettingsModule {}

        const moduleRef = await Test.createTestingModule({
          imports: [
            AgentRxModule.forRootAsync({
              imports: [SettingsModule],
              inject: [SETTINGS],
              useFactory: async (s: Settings) => ({ config: localConfig(s.baseUrl), tools: [new ShoutTool(s.suffix)] }),
            }),
          ],
          providers: [AskService],
        }).compile();
        app = moduleRef.createNestApplication({ logger: false });
        await app.init();

        const result = await app.get(AskService).ask('shout hi');
        expect(result.text).toBe('done');
        const last = emulator.requests.at(-1)!.body as { messages: { role: string; content: string }[] };
        expect(last.messages.find((m) => m.role === 'tool')!.content).toBe('HI!!');
        expect(app.get(AGENTRX).pluginIds.tools).toEqual(['shout']);
      });
    });
  });

  describe('with agui', () => {
    describe('when mounted under a path behind a global prefix', () => {
      it('should serve POST <prefix>/<path>/agent as an AG-UI SSE stream and GET healthz', async () => {
        emulator = await startOpenAiEmulator({ model: 'demo' });
        const moduleRef = await Test.createTestingModule({
          imports: [AgentRxModule.forRoot({ config: localConfig(emulator.baseUrl), modules: [demoToolsModule], agui: { path: 'agui', page: false } })],
        }).compile();
        app = moduleRef.createNestApplication({ logger: false });
        app.setGlobalPrefix('api');
        await app.listen(0, '127.0.0.1');
        const base = `${await app.getUrl()}/api/agui`.replace('[::1]', '127.0.0.1');

        const res = await fetch(`${base}/agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify(runInput('t1', DEMO_PROMPT)),
        });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toContain('text/event-stream');
        const types = await sseTypes(res);
        expect(types[0]).toBe('RUN_STARTED');
        expect(types.filter((t) => t === 'TOOL_CALL_RESULT')).toHaveLength(3);
        expect(types.at(-1)).toBe('RUN_FINISHED');

        const health = await fetch(`${base}/healthz`);
        expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
        const bad = await fetch(`${base}/agent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ threadId: 't2' }) });
        expect(bad.status).toBe(400);
        expect((await fetch(`${base}`)).status).toBe(404);
      });
    });

    describe('when the app closes while a run is streaming', () => {
      it('should end the stream with RUN_ERROR cancelled and close', async () => {
        emulator = await startOpenAiEmulator({ model: 'demo', faults: { 0: { kind: 'hang' } } });
        const moduleRef = await Test.createTestingModule({ imports: [AgentRxModule.forRoot({ config: localConfig(emulator.baseUrl), agui: true })] }).compile();
        app = moduleRef.createNestApplication({ logger: false });
        await app.listen(0, '127.0.0.1');
        const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
        const handler = app.get<AgUiHttpHandler>(AGENTRX_AGUI_HANDLER);

        const res = await fetch(`${url}/agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify(runInput('t1', 'hello')),
        });
        expect(res.status).toBe(200);
        await emulator.waitForRequest(0);
        expect(handler.activeRuns).toBe(1);
        const closing = app.close();
        app = undefined;
        const types = await sseTypes(res);
        await closing;

        expect(types).toEqual(['RUN_STARTED', 'RUN_ERROR']);
        expect(handler.activeRuns).toBe(0);
      });
    });

    describe('when the page is on (default)', () => {
      it('should serve the chat page at the mount path', async () => {
        emulator = await startOpenAiEmulator({ model: 'demo' });
        const moduleRef = await Test.createTestingModule({
          imports: [AgentRxModule.forRootAsync({ useFactory: () => ({ config: localConfig(emulator.baseUrl) }), agui: { path: '/chat/' } })],
        }).compile();
        app = moduleRef.createNestApplication({ logger: false });
        await app.listen(0, '127.0.0.1');
        const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
        const page = await fetch(`${url}/chat`);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toContain('text/html');
      });
    });
  });
});
