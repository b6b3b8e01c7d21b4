import { ConfigSections } from '../../core/config/config-tokens.js';
import { bindPlugin } from '../../core/di/bind-plugin.js';
import { ContainerModule } from '../../core/util/inversify.js';
import { EventConsumer } from '../../core/plugin/event-consumer.js';
import { OtelConsumerOptions, otelConfigSection } from './otel.config.js';
import { OtelConsumer } from './otel.consumer.js';

/**
 * Binds the OpenTelemetry consumer (`otel`, one singleton under `EventConsumer`), the given
 * programmatic options under `OtelConsumerOptions`, and contributes the optional top-level
 * `otel` config section. The facade binds the validated section and `AgentRxConfig`, from which
 * the consumer derives agent name, provider and model.
 *
 * ```ts
 * const rx = await AgentRx.create({ config, modules: [otelConsumerModule({ tracerProvider })] });
 * ```
 *
 * @param options Programmatic options; they win over the `otel` config section.
 * @returns A ContainerModule to pass in `AgentRx.create({ modules })`.
 */
export function otelConsumerModule(options: OtelConsumerOptions = {}): ContainerModule {
  return new ContainerModule((bind) => {
    bind.bind<OtelConsumerOptions>(OtelConsumerOptions).toConstantValue(options);
    bind.bind(ConfigSections).toConstantValue(otelConfigSection);
    bindPlugin(bind, OtelConsumer, EventConsumer);
  });
}
