import { Module } from '@nestjs/common';
import type { AgentRxConfigInput } from '../../agentrx.js';
import { aguiHttpModule } from '../../servers/agui-http/agui-http.module.js';
import { otelConsumerModule } from '../../consumers/otel/otel.module.js';
import { demoToolsModule } from '../../plugins/tools/tools.module.js';
import { AgentRxModule } from '../agentrx.module.js';
import { AskController, AskService } from './ask.controller.js';

/** Injection token of the environment the sample reads its settings from (tests override it). */
export const SAMPLE_ENV = Symbol('SAMPLE_ENV');

/** The environment variables the sample reads. */
export type SampleEnv = Readonly<Record<string, string | undefined>>;

/**
 * The sample's agentrx config: the JSON file named by `AGENTRX_CONFIG` when set (with `${VAR}`
 * interpolation), else the `local` provider at `AGENTRX_BASE_URL` (default Ollama,
 * `http://127.0.0.1:11434/v1`) with model `AGENTRX_MODEL` (default `llama3.1`).
 */
export function sampleConfig(env: SampleEnv): AgentRxConfigInput | string {
  if (env['AGENTRX_CONFIG']) return env['AGENTRX_CONFIG'];
  return {
    provider: 'local',
    providers: { local: { baseUrl: env['AGENTRX_BASE_URL'] ?? 'http://127.0.0.1:11434/v1', model: env['AGENTRX_MODEL'] ?? 'llama3.1' } },
  };
}

/** Provides {@link SAMPLE_ENV} (`process.env`) to the AgentRx factory. */
@Module({ providers: [{ provide: SAMPLE_ENV, useValue: process.env }], exports: [SAMPLE_ENV] })
export class SampleEnvModule {}

/**
 * The sample host app (`nest start`, entry `nest/sample/main`): the AgentRx facade built by
 * `AgentRxModule.forRootAsync` from the environment, with the demo tools, the OpenTelemetry
 * consumer (spans go to the global tracer provider: register an SDK to export them) and the
 * AG-UI endpoint (`POST /agent`, chat page at `/`, options from the config's `agui` section);
 * plus a plain `POST /ask` API in {@link AskController}.
 */
@Module({
  imports: [
    AgentRxModule.forRootAsync({
      imports: [SampleEnvModule],
      inject: [SAMPLE_ENV],
      useFactory: (env: SampleEnv) => ({ config: sampleConfig(env), env, modules: [demoToolsModule, aguiHttpModule, otelConsumerModule()] }),
      agui: true,
    }),
  ],
  controllers: [AskController],
  providers: [AskService],
})
export class AppModule {}
