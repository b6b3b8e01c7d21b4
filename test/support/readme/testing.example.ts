// #region readme
import { IsString } from 'class-validator';
import { AgentRx, injectable, type ToolHandler } from 'agentrx';
import { startOpenAiEmulator } from 'agentrx/testing';

class WeatherInput {
  @IsString() city!: string;
}

@injectable()
class WeatherToolHandler implements ToolHandler<WeatherInput> {
  readonly name = 'get_weather';
  readonly description = 'Current weather for a city.';
  readonly inputType = WeatherInput;
  handle(input: WeatherInput) {
    return { city: input.city, tempC: 21 };
  }
}

// A real OpenAI-compatible server on 127.0.0.1 that plays one scripted turn per model call.
const emulator = await startOpenAiEmulator({
  script: [
    { toolCalls: [{ name: 'get_weather', arguments: { city: 'Lisbon' } }] }, // turn 1: call the tool
    { text: 'Lisbon: 21 °C.' }, // turn 2: answer
  ],
});
const rx = await AgentRx.create({
  tools: [WeatherToolHandler],
  config: { provider: 'local', providers: { local: { baseUrl: emulator.baseUrl, model: 'test-model' } } },
});
const result = await rx.run({ prompt: 'Weather in Lisbon?' });
// result.text === 'Lisbon: 21 °C.', result.turns === 2; emulator.requests holds what the model
// was sent (the second one carries the tool result {"city":"Lisbon","tempC":21}).
await rx.stop();
await emulator.close();
// #endregion readme

export { emulator, result };
