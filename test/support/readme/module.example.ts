import { startOpenAiEmulator } from 'agentrx/testing';
// #region readme
import { IsInt, IsString, Max, Min } from 'class-validator';
import { AgentRx, ConfigSections, ContainerModule, ToolHandler, bindPlugin, inject, injectable, type ConfigSection } from 'agentrx';

/** The `greeter` config section: validated with the rest of the config, defaults filled. */
class GreeterOptions {
  @IsString() greeting: string = 'Hello';
  @IsInt() @Min(1) @Max(5) repeat: number = 1;
}
const GreeterOptionsToken = Symbol('GreeterOptions');
const greeterSection: ConfigSection<GreeterOptions> = {
  key: 'greeter', // where its value lives: a top-level key with scope 'root', else providers.<key>
  scope: 'root',
  options: GreeterOptions,
  token: GreeterOptionsToken, // AgentRx.create binds the validated instance under it
};

class GreetInput {
  @IsString() name!: string;
}

@injectable()
class GreetToolHandler implements ToolHandler<GreetInput> {
  readonly name = 'greet';
  readonly description = 'Greets someone by name.';
  readonly inputType = GreetInput;
  constructor(@inject(GreeterOptionsToken) private readonly options: GreeterOptions) {}
  handle(input: GreetInput): string {
    return Array.from({ length: this.options.repeat }, () => `${this.options.greeting}, ${input.name}!`).join(' ');
  }
}

/** One module per plugin: its config section and its classes, each a singleton under its token. */
export const greeterModule = new ContainerModule((options) => {
  options.bind<ConfigSection>(ConfigSections).toConstantValue(greeterSection);
  bindPlugin(options, GreetToolHandler, ToolHandler);
});
// #endregion readme

const emulator = await startOpenAiEmulator({ script: [{ toolCalls: [{ name: 'greet', arguments: { name: 'Ana' } }] }, { text: 'Done.' }] });
const baseUrl = emulator.baseUrl;
// #region readme
const rx = await AgentRx.create({
  modules: [greeterModule],
  config: { greeter: { greeting: 'Olá', repeat: 2 }, providers: { local: { baseUrl, model: 'llama3.1' } } },
});
// #endregion readme
const result = await rx.run({ prompt: 'Greet Ana' });
await rx.stop();
await emulator.close();
/** What the tool answered (the second request carries it back to the model). */
const toolMessage = (emulator.requests.at(-1)?.body as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === 'tool')?.content;

export { result, toolMessage };
