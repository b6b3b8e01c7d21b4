import { AgentRx } from '../../../src/agentrx.js';
import { ContainerModule } from '../../../src/core/util/inversify.js';
import type { ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import { ToolSource, type ToolSourceSubscription } from '../../../src/core/plugin/tool-source.js';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import { startOpenAiEmulator, type OpenAiEmulator } from '../../../src/testing/openai-emulator.js';

/** A tool source whose `grow` tool adds a `shiny` tool (as an MCP server's list_changed would). */
class GrowingSource implements ToolSource {
  readonly id = 'growing';
  private list: ToolHandler[];
  private readonly listeners = new Set<() => void>();
  constructor() {
    const grow = defineTool({
      name: 'grow',
      description: 'Adds the shiny tool.',
      inputSchema: { type: 'object', properties: {} },
      handle: () => {
        this.list = [...this.list, defineTool({ name: 'shiny', description: 'New.', inputSchema: { type: 'object', properties: {} }, handle: () => 'shiny!' })];
        for (const l of this.listeners) l();
        return 'grown';
      },
    });
    this.list = [grow];
  }
  tools(): readonly ToolHandler[] {
    return this.list;
  }
  onDidChangeTools(listener: () => void): ToolSourceSubscription {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }
}

describe('a tool source whose tools change during a Local session', () => {
  let emu: OpenAiEmulator | undefined;
  let rx: AgentRx | undefined;
  afterEach(async () => {
    await rx?.stop();
    await emu?.close();
  });

  it('should offer the new tool from the next model call of the same session, and run it', async () => {
    emu = await startOpenAiEmulator({
      script: [{ toolCalls: [{ id: 'c1', name: 'grow', arguments: {} }] }, { toolCalls: [{ id: 'c2', name: 'shiny', arguments: {} }] }, { text: 'Done.' }],
    });
    const source = new GrowingSource();
    rx = await AgentRx.create({
      config: { logLevel: 'silent', consumers: { terminal: false }, providers: { local: { baseUrl: emu.baseUrl, model: 'scripted' } } },
      modules: [new ContainerModule((o) => void o.bind(ToolSource).toConstantValue(source))],
    });
    const result = await rx.run({ prompt: 'grow, then use the new tool' });
    expect(result.text).toBe('Done.');
    const toolsOf = (i: number): string[] =>
      ((emu!.requests.filter((r) => r.completion !== undefined)[i]!.body as { tools: { function: { name: string } }[] }).tools ?? []).map(
        (t) => t.function.name,
      );
    expect(toolsOf(0)).not.toContain('shiny');
    expect(toolsOf(1)).toContain('shiny');
    const last = emu.requests.filter((r) => r.completion !== undefined)[2]!.body as { messages: { role: string; content?: string }[] };
    expect(last.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['grown', 'shiny!']);
  });
});
