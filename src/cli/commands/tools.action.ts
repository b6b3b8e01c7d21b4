import { AgentRx } from '../../agentrx.js';
import { ToolRegistry } from '../../core/di/core-module.js';
import type { ToolHandler } from '../../core/plugin/tool-handler.js';
import { inputKindOf } from '../../core/tools/tool-input.js';
import type { ToolRegistryImpl } from '../../core/tools/tool-registry.js';
import { declarationOf } from '../../core/tools/tool-schema.js';
import { mcpProgressTo, withMcpFlags } from '../mcp-flags.js';
import { guarded } from '../report.js';
import { demoTools, readConfig } from '../run-config.js';
import { loadUserPlugins } from '../user-modules.js';
import type { CliIo } from '../cli-io.js';
import type { ToolsFlags } from './tools.js';
/** One row of `agentrx tools`. */
export interface ToolRow {
  readonly name: string;
  /** `class` (a DTO), `schema` (JSON Schema / Standard Schema) or `mcp:<server>`. */
  readonly source: string;
  readonly description: string;
  /** The input in one line: `message: string, limit?: integer`. */
  readonly input: string;
  readonly requireApproval: boolean;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** The tools `rx` offers now (local and from tool sources such as MCP servers), sorted by name. */
export function toolRows(rx: AgentRx): ToolRow[] {
  const registry = rx.container.get<ToolRegistryImpl>(ToolRegistry);
  return registry.all
    .map((h) => {
      const d = declarationOf(h);
      return {
        name: h.name,
        source: sourceOf(h),
        description: h.description,
        input: summarizeSchema(d.inputSchema),
        requireApproval: h.requireApproval === true,
        inputSchema: d.inputSchema,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * `agentrx tools`: every tool with its source, description and input. Text: a block per tool
 * (`name  [source]`, the description, `input: …`); `json`: one JSON object per line with the
 * full input schema.
 */
export function listTools(rx: AgentRx, opts: { readonly json?: boolean } = {}): string {
  const rows = toolRows(rx);
  if (opts.json) return rows.map((r) => `${JSON.stringify(r)}\n`).join('');
  if (rows.length === 0) return 'no tools\n';
  return rows
    .map((r) => {
      const description = r.description.replace(/\s+/g, ' ').trim();
      return `${r.name}  [${r.source}${r.requireApproval ? ', requires approval' : ''}]\n${description ? `  ${description}\n` : ''}  input: ${r.input}\n`;
    })
    .join('\n');
}

function sourceOf(h: ToolHandler): string {
  if (h.source) return h.source;
  return inputKindOf(h) === 'class' ? 'class' : 'schema';
}

/** `a: string, b?: integer[]`, `(none)` without properties. */
export function summarizeSchema(schema: Readonly<Record<string, unknown>> | undefined): string {
  const props = (schema?.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  const parts = Object.entries(props).map(([k, v]) => `${k}${required.has(k) ? '' : '?'}: ${typeOf(v)}`);
  return parts.length > 0 ? parts.join(', ') : '(none)';
}

function typeOf(s: Record<string, unknown> | undefined): string {
  if (!s || typeof s !== 'object') return 'any';
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join('|');
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.type === 'array') return `${typeOf(s.items as Record<string, unknown> | undefined)}[]`;
  if (Array.isArray(s.type)) return s.type.join('|');
  if (typeof s.type === 'string') return s.type;
  if (typeof s.$ref === 'string') return s.$ref.split('/').pop() ?? 'object';
  const union = (s.anyOf ?? s.oneOf) as Record<string, unknown>[] | undefined;
  if (Array.isArray(union)) return union.map(typeOf).join('|');
  return 'any';
}

/** `agentrx tools`: starts the configured instance (MCP servers included), lists its tools, stops it. */
export function toolsCommand(flags: ToolsFlags, io: CliIo): Promise<number> {
  return guarded(io, async () => {
    const base = flags.config ? await readConfig(flags.config, io) : {};
    const user = await loadUserPlugins(flags.module, base, flags.config, io.cwd);
    const rx = await AgentRx.create({
      config: withMcpFlags(base, flags.mcp),
      env: io.env,
      tools: user.tools,
      consumers: user.consumers,
      modules: [...demoTools(flags.demoTools, io.cwd), ...user.modules, mcpProgressTo(io.err)],
    });
    try {
      io.out.write(listTools(rx, { json: flags.json === true }));
    } finally {
      await rx.stop();
    }
  });
}
