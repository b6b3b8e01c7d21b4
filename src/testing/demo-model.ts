import type { EmulatorToolCall, EmulatorTurn } from './openai-emulator/openai-script.js';

/**
 * The rule-based demo model behind `startOpenAiEmulator({ model: 'demo' })`. Deterministic and not
 * an LLM (every answer says so). From the last user prompt it picks demo tools by keyword, only
 * among the tools the request declares:
 * - `get_time` for time / date / clock / today;
 * - `calculate` for an arithmetic expression in the prompt (e.g. "what is (17 + 25) * 3");
 * - `read_file` for a file name in the prompt (e.g. README.md);
 * - `ask_user` (a frontend tool an AG-UI page declares) for "ask me" / "check with me" / "confirm
 *   with me": a yes/no question about the prompt, answered by the user on the page.
 * It calls them in parallel in one turn; once their results are in the history it streams a final
 * answer quoting each result and a one-line summary. With no keyword (or on the local provider's
 * FINAL TURN directive) it answers directly.
 */

/** The part of a chat-completions request the demo model reads. */
export interface DemoModelRequest {
  readonly messages: readonly unknown[];
  readonly tools?: readonly unknown[];
}

/** Marks every demo answer, so nobody mistakes it for a model's output. */
export const DEMO_MODEL_LABEL = '[demo model: rule-based and deterministic, not an LLM]';

type Json = Record<string, unknown>;

/** Decides the demo model's next turn for `request`. Pure. */
export function demoModelTurn(request: DemoModelRequest): EmulatorTurn {
  const messages = request.messages.filter(isMap);
  const lastAssistant = findLastIndex(messages, (m) => m['role'] === 'assistant');
  const callMessage = lastAssistant >= 0 && Array.isArray(messages[lastAssistant]!['tool_calls']) ? messages[lastAssistant]! : undefined;
  if (callMessage) {
    const results = messages.slice(lastAssistant + 1).filter((m) => m['role'] === 'tool');
    if (results.length > 0) return finalAnswer(callMessage, results);
  }

  const userTexts = messages.filter((m) => m['role'] === 'user').map((m) => contentText(m['content']));
  const finalTurn = userTexts.length > 0 && userTexts[userTexts.length - 1]!.startsWith('FINAL TURN');
  const prompt = [...userTexts].reverse().find((t) => !isDirective(t)) ?? '';
  if (finalTurn) {
    return { text: `${DEMO_MODEL_LABEL} This is the final turn, so I answer without tools. You asked: "${prompt}".`, finishReason: 'stop' };
  }

  const tools = declaredTools(request.tools);
  const calls: EmulatorToolCall[] = [];
  if (tools.has('get_time') && /\b(time|date|clock|today)\b/i.test(prompt)) calls.push({ name: 'get_time', arguments: {} });
  const expression = findExpression(prompt);
  if (tools.has('calculate') && expression !== undefined) {
    calls.push({ name: 'calculate', arguments: { [argName(tools.get('calculate'), 'expression')]: expression } });
  }
  const file = findFileName(prompt);
  if (tools.has('read_file') && file !== undefined) calls.push({ name: 'read_file', arguments: { [argName(tools.get('read_file'), 'path')]: file } });
  if (tools.has('ask_user') && /\b(ask me|check with me|confirm with me)\b/i.test(prompt)) {
    calls.push({ name: 'ask_user', arguments: { [argName(tools.get('ask_user'), 'question')]: `Shall I go ahead with "${prompt.slice(0, 120)}"?` } });
  }
  if (calls.length > 0) return { toolCalls: calls, finishReason: 'tool_calls' };

  const offer = [...tools.keys()].filter((n) => n === 'get_time' || n === 'calculate' || n === 'read_file');
  const hint =
    offer.length > 0
      ? ` I can use ${offer.join(', ')}: ask me for the time, for arithmetic such as (17 + 25) * 3, or about a file such as README.md.`
      : ' No demo tools (get_time, calculate, read_file) were offered to me, so I can only echo you.';
  return { text: `${DEMO_MODEL_LABEL} You said: "${prompt}".${hint}`, finishReason: 'stop' };
}

function finalAnswer(callMessage: Json, results: readonly Json[]): EmulatorTurn {
  const names = new Map<string, string>();
  for (const c of callMessage['tool_calls'] as unknown[]) {
    if (isMap(c) && typeof c['id'] === 'string' && isMap(c['function'])) names.set(c['id'], String(c['function']['name'] ?? 'tool'));
  }
  const lines = results.map((r) => {
    const name = names.get(String(r['tool_call_id'])) ?? 'tool';
    const content = contentText(r['content']);
    const failure = parseError(content);
    return failure !== undefined ? `- ${name} failed: "${failure}"` : `- ${name} returned: "${excerpt(content)}"`;
  });
  const used = [...new Set(results.map((r) => names.get(String(r['tool_call_id'])) ?? 'tool'))];
  return {
    text: `${DEMO_MODEL_LABEL} Here is what the tools told me:\n${lines.join('\n')}\nSummary: I used ${used.length} tool${used.length === 1 ? '' : 's'} (${used.join(', ')}) and quoted ${results.length} result${results.length === 1 ? '' : 's'} above.`,
    finishReason: 'stop',
  };
}

/** The first line of a tool result, at most 160 characters (a whole file would drown the answer). */
function excerpt(content: string): string {
  const first =
    content
      .split('\n')
      .find((l) => l.trim().length > 0)
      ?.trim() ?? '';
  const more = first.length < content.trim().length;
  return first.length > 160 ? `${first.slice(0, 159)}…` : more ? `${first} …` : first;
}

/** The longest arithmetic expression in `text` (digits, + - * / % ^, parentheses), balanced. */
export function findExpression(text: string): string | undefined {
  const candidates = text.match(/[\d(][\d\s.+\-*/%^()]*[\d)]/g) ?? [];
  let best: string | undefined;
  for (const raw of candidates) {
    const c = balance(raw.trim());
    if (!/\d/.test(c) || !/(\d|\))\s*[-+*/%^]\s*(\d|\()/.test(c)) continue;
    if (best === undefined || c.length > best.length) best = c;
  }
  return best;
}

/** A file name mentioned in `text` (e.g. `README.md`, `src/index.ts`), without surrounding punctuation. */
export function findFileName(text: string): string | undefined {
  for (const token of text.split(/\s+/)) {
    const t = token
      .replace(/^[("'`[]+/, '')
      .replace(/[)"'`\],;:!?]+$/, '')
      .replace(/\.$/, '');
    const m = /^((?:[\w-]+\/)*([\w-][\w.-]*)\.([A-Za-z][A-Za-z0-9]{0,7}))$/.exec(t);
    if (m && m[2]!.length >= 2 && /[A-Za-z]/.test(m[2]!)) return m[1];
  }
  return undefined;
}

function balance(expr: string): string {
  let e = expr;
  for (let i = 0; i < 10; i++) {
    const opens = (e.match(/\(/g) ?? []).length;
    const closes = (e.match(/\)/g) ?? []).length;
    if (opens === closes) return e;
    e = opens > closes ? e.replace(/^\(\s*/, '') : e.replace(/\s*\)$/, '');
  }
  return e;
}

function declaredTools(tools: readonly unknown[] | undefined): Map<string, Json | undefined> {
  const out = new Map<string, Json | undefined>();
  for (const t of tools ?? []) {
    if (isMap(t) && isMap(t['function']) && typeof t['function']['name'] === 'string') {
      const params = t['function']['parameters'];
      out.set(t['function']['name'], isMap(params) ? params : undefined);
    }
  }
  return out;
}

/** `preferred` when the schema has it (or has no properties); else its only string property. */
function argName(schema: Json | undefined, preferred: string): string {
  const props = schema && isMap(schema['properties']) ? schema['properties'] : undefined;
  if (!props || preferred in props) return preferred;
  const strings = Object.entries(props).filter(([, p]) => isMap(p) && p['type'] === 'string');
  return strings.length === 1 ? strings[0]![0] : preferred;
}

function isDirective(text: string): boolean {
  return text.startsWith('FINAL TURN') || text.startsWith('STOP —');
}

function parseError(content: string): string | undefined {
  try {
    const v: unknown = JSON.parse(content);
    if (isMap(v) && v['isError'] === true) return String(v['error']);
  } catch {
    // a plain-text result
  }
  return undefined;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (isMap(p) && typeof p['text'] === 'string' ? p['text'] : '')).join('');
  return '';
}

function findLastIndex<T>(items: readonly T[], pred: (t: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (pred(items[i]!)) return i;
  return -1;
}

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
