import { emptyUsage, type RawEvent, type ToolUse, type Usage } from '../../../core/model.js';

/**
 * Folds the Converse events of one `InvokeHarness` answer (`{messageStart}`,
 * `{contentBlockStart}`, `{contentBlockDelta}`, `{contentBlockStop}`, `{messageStop}`,
 * `{metadata}` as the AWS SDK decodes them) into text, tool uses, stop reason and usage.
 *
 * Tool-use blocks are keyed by `toolUseId` in first-seen order; each `contentBlockIndex` routes
 * input deltas to the id currently started at that index, so an index reused for a new id opens
 * a new block, and an id started again collapses into its first block (its input restarts).
 * Input fragments are joined and parsed once, at the end: empty input is `{}`, anything that is
 * not a JSON object gives a ToolUse with `inputError` (the core answers it with an `is_error`
 * result instead of running the tool).
 *
 * Tool uses whose `type` is `server_tool_use` or `mcp_tool_use`, or that a `toolResult` block
 * of the same answer already answered, ran on the harness: they are server tool uses, observed
 * and never dispatched. Usage is summed over every `metadata` event (one per model call).
 */
export class ConverseAssembler {
  private readonly blocks = new Map<string, { name: string; type: string | undefined; input: string }>();
  private readonly active = new Map<number, string | undefined>();
  private readonly answered = new Set<string>();
  private role: string | undefined;
  private textValue = '';
  private stop: string | undefined;
  private usageValue: Usage = emptyUsage();
  private sawStop = false;

  /** Adds one event; ignores anything that is not a Converse event. Never throws. */
  add(event: RawEvent): void {
    const start = map(event['messageStart']);
    if (start) {
      this.role = typeof start['role'] === 'string' ? start['role'] : undefined;
      return;
    }
    const blockStart = map(event['contentBlockStart']);
    if (blockStart) {
      const index = blockStart['contentBlockIndex'];
      const s = map(blockStart['start']);
      const use = map(s?.['toolUse']);
      const result = map(s?.['toolResult']);
      if (typeof index !== 'number') return;
      if (use && typeof use['toolUseId'] === 'string' && use['toolUseId'] !== '') {
        const id = use['toolUseId'];
        this.blocks.set(id, {
          name: typeof use['name'] === 'string' ? use['name'] : '',
          type: typeof use['type'] === 'string' ? use['type'] : undefined,
          input: '',
        });
        this.active.set(index, id);
      } else {
        if (result && typeof result['toolUseId'] === 'string') this.answered.add(result['toolUseId']);
        this.active.set(index, undefined);
      }
      return;
    }
    const blockDelta = map(event['contentBlockDelta']);
    if (blockDelta) {
      const delta = map(blockDelta['delta']);
      if (!delta) return;
      if (typeof delta['text'] === 'string') {
        if (this.role !== 'user') this.textValue += delta['text'];
        return;
      }
      const use = map(delta['toolUse']);
      const index = blockDelta['contentBlockIndex'];
      if (use && typeof use['input'] === 'string' && typeof index === 'number') {
        const id = this.active.get(index);
        const block = id !== undefined ? this.blocks.get(id) : undefined;
        if (block) block.input += use['input'];
      }
      return;
    }
    const blockStop = map(event['contentBlockStop']);
    if (blockStop) {
      if (typeof blockStop['contentBlockIndex'] === 'number') this.active.delete(blockStop['contentBlockIndex']);
      return;
    }
    const messageStop = map(event['messageStop']);
    if (messageStop) {
      this.sawStop = true;
      this.stop = typeof messageStop['stopReason'] === 'string' ? messageStop['stopReason'] : undefined;
      return;
    }
    const usage = map(map(event['metadata'])?.['usage']);
    if (usage) {
      this.usageValue = {
        inputTokens: this.usageValue.inputTokens + count(usage['inputTokens']),
        outputTokens: this.usageValue.outputTokens + count(usage['outputTokens']),
      };
    }
  }

  /** True once a `messageStop` was folded (a complete answer). */
  get complete(): boolean {
    return this.sawStop;
  }

  /** The raw stop reason of the last `messageStop`, if any. */
  get stopReason(): string | undefined {
    return this.stop;
  }

  /** Concatenated assistant text deltas. */
  get text(): string {
    return this.textValue;
  }

  /** Usage summed over every `metadata` event. */
  get usage(): Usage {
    return { ...this.usageValue };
  }

  /** Tool uses the caller must run, in first-seen order. */
  customToolUses(): ToolUse[] {
    return this.toolUses()
      .filter((u) => u.custom)
      .map((u) => u.use);
  }

  /** Tool uses the harness ran itself (observed only), in first-seen order. */
  serverToolUses(): ToolUse[] {
    return this.toolUses()
      .filter((u) => !u.custom)
      .map((u) => u.use);
  }

  private toolUses(): { use: ToolUse; custom: boolean }[] {
    return [...this.blocks.entries()].map(([id, b]) => ({
      use: decodeToolUse(id, b.name, b.input),
      custom: (b.type === undefined || b.type === 'tool_use') && !this.answered.has(id),
    }));
  }
}

/** A ToolUse from joined input fragments: `{}` for empty input, `inputError` for anything but a JSON object. */
export function decodeToolUse(id: string, name: string, input: string): ToolUse {
  if (input.trim() === '') return { id, name, input: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return { id, name, input: {}, inputError: `Tool input is not valid JSON (${why}): ${input.length > 200 ? `${input.slice(0, 200)}…` : input}` };
  }
  const object = map(parsed);
  if (object) return { id, name, input: object };
  const kind = Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed;
  return { id, name, input: {}, inputError: `Tool input must be a JSON object, got ${kind}.` };
}

function map(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}
