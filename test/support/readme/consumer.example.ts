import { startOpenAiEmulator } from 'agentrx/testing';
// #region readme
import { AgentRx, BaseEventConsumer, demoToolsModule, type ConsumerContext, type StopContext, type StopReason } from 'agentrx';

/** Collects each session's tool calls and streamed text; one instance serves every session. */
class ToolAudit extends BaseEventConsumer {
  readonly id = 'tool-audit'; // stable kebab-case id, unique among consumers
  readonly calls: string[] = [];
  readonly ended: string[] = [];
  text = '';

  override onToolStart(toolCallId: string, toolName: string, ctx: ConsumerContext): void {
    this.calls.push(`${ctx.runId}: ${toolName} (${toolCallId})`);
  }

  override onTextContent(_messageId: string, delta: string): void {
    this.text += delta;
  }

  // Once per session, after its last event; may be async (flush a file, a queue…), time-bounded.
  override async stop(reason: StopReason, ctx: StopContext): Promise<void> {
    this.ended.push(`${ctx.sessionId}: ${reason}`);
  }
}

const audit = new ToolAudit();
// #endregion readme
const emulator = await startOpenAiEmulator({ script: [{ toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] }, { text: 'It is 42.' }] });
const baseUrl = emulator.baseUrl;
// #region readme
const rx = await AgentRx.create({
  modules: [demoToolsModule],
  consumers: [audit], // instances or @injectable() classes
  config: { providers: { local: { baseUrl, model: 'llama3.1' } } },
});
await rx.run({ prompt: 'What is 6 * 7?' });
await rx.stop();
// #endregion readme
await emulator.close();

export { audit };
