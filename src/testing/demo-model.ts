import type { EmulatorToolCall, EmulatorTurn } from './openai-emulator/openai-script.js';

/**
 * The rule-based demo model behind `startOpenAiEmulator({ model: 'demo' })`. Deterministic and not
 * an LLM (every answer says so). It answers the newest user message (the local provider's FINAL
 * TURN and STOP directives are not one). From it, it picks demo tools by keyword, only among the
 * tools the request declares:
 * - `get_time` for time / date / clock / today;
 * - `calculate` for an arithmetic expression in the prompt (e.g. "what is (17 + 25) * 3");
 * - `read_file` for a file name in the prompt (e.g. README.md);
 * - `add_todo` for todo / to-do / "remind me to" / "change the state": the text after the keyword
 *   (e.g. "add a todo: buy milk" adds "buy milk"), else the prompt;
 * - `send_email` for send / email: to the first address in the prompt (else someone@example.com),
 *   the subject being what follows "about" (else a fixed one);
 * - `ask_user` (a frontend tool an AG-UI page declares) for "ask me" / "check with me" / "confirm
 *   with me": a yes/no question about the prompt, answered by the user on the page.
 * It calls them in parallel in one turn; once tool results follow the newest user message it
 * streams a final answer quoting each of them and a one-line summary (older results, from before
 * that message, are not quoted again). With no keyword (or on the local provider's FINAL TURN
 * directive) it answers directly.
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
  const newest = findLastIndex(messages, (m) => m['role'] === 'user' && !isDirective(contentText(m['content'])));
  const results = messages.slice(newest + 1).filter((m) => m['role'] === 'tool');
  if (results.length > 0) return finalAnswer(messages, results);

  const userTexts = messages.filter((m) => m['role'] === 'user').map((m) => contentText(m['content']));
  const finalTurn = userTexts.length > 0 && userTexts[userTexts.length - 1]!.startsWith('FINAL TURN');
  const prompt = newest >= 0 ? contentText(messages[newest]!['content']) : '';
  if (finalTurn) {
    return { text: `${DEMO_MODEL_LABEL} This is the final turn, so I answer without tools. You asked: "${prompt}".`, finishReason: 'stop' };
  }

  const tools = declaredTools(request.tools);
  const calls = pickTools(prompt, tools);
  if (calls.length > 0) return { toolCalls: calls, finishReason: 'tool_calls' };

  const offer = SKILLS.filter(([name]) => tools.has(name));
  const hint =
    offer.length > 0
      ? ` I can use ${offer.map(([name]) => name).join(', ')}: ask me ${listed(offer.map(([, phrase]) => phrase))}.`
      : ` No demo tools (${SKILLS.map(([name]) => name).join(', ')}) were offered to me, so I can only echo you.`;
  return { text: `${DEMO_MODEL_LABEL} You said: "${prompt}".${hint}`, finishReason: 'stop' };
}

/** The demo tools the model knows, with how to ask for each (the hint of a direct answer). */
const SKILLS: readonly (readonly [string, string])[] = [
  ['get_time', 'for the time'],
  ['calculate', 'for arithmetic such as (17 + 25) * 3'],
  ['read_file', 'about a file such as README.md'],
  ['add_todo', 'to add a todo such as "add a todo: buy milk" (it goes into the shared state)'],
  ['send_email', 'to send an email to bob@example.com (it waits for your approval, then only pretends)'],
];

/** The tool calls `prompt` asks for, among the declared `tools`, in a fixed order. */
function pickTools(prompt: string, tools: ReadonlyMap<string, Json | undefined>): EmulatorToolCall[] {
  const calls: EmulatorToolCall[] = [];
  const arg = (tool: string, preferred: string): string => argName(tools.get(tool), preferred);
  if (tools.has('get_time') && /\b(time|date|clock|today)\b/i.test(prompt)) calls.push({ name: 'get_time', arguments: {} });
  const expression = findExpression(prompt);
  if (tools.has('calculate') && expression !== undefined) calls.push({ name: 'calculate', arguments: { [arg('calculate', 'expression')]: expression } });
  const file = findFileName(prompt);
  if (tools.has('read_file') && file !== undefined) calls.push({ name: 'read_file', arguments: { [arg('read_file', 'path')]: file } });
  const todo = findTodo(prompt);
  if (tools.has('add_todo') && todo !== undefined) calls.push({ name: 'add_todo', arguments: { [arg('add_todo', 'text')]: todo } });
  if (tools.has('send_email') && /\b(send|e-?mail)\b/i.test(prompt)) {
    const email = findEmail(prompt);
    calls.push({ name: 'send_email', arguments: { [arg('send_email', 'to')]: email.to, [arg('send_email', 'subject')]: email.subject } });
  }
  if (tools.has('ask_user') && /\b(ask me|check with me|confirm with me)\b/i.test(prompt)) {
    calls.push({ name: 'ask_user', arguments: { [arg('ask_user', 'question')]: `Shall I go ahead with "${prompt.slice(0, 120)}"?` } });
  }
  return calls;
}

/** `a`, `a or b`, `a, b, or c`. */
function listed(items: readonly string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')}${items.length > 2 ? ',' : ''} or ${items[items.length - 1]!}`;
}

/** Quotes the tool `results` that follow the newest user message, naming each by its call in `messages`. */
function finalAnswer(messages: readonly Json[], results: readonly Json[]): EmulatorTurn {
  const names = new Map<string, string>();
  for (const m of messages) {
    if (m['role'] !== 'assistant' || !Array.isArray(m['tool_calls'])) continue;
    for (const c of m['tool_calls'] as unknown[]) {
      if (isMap(c) && typeof c['id'] === 'string' && isMap(c['function'])) names.set(c['id'], String(c['function']['name'] ?? 'tool'));
    }
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

/**
 * The todo `text` asks to add, or undefined when it asks for none: what follows "todo", "to-do"
 * or "remind me" (a leading ":" or "to" dropped) up to the end of its sentence or a "then", else
 * the whole text when it asks to change or update the state; at most 120 characters, trailing
 * punctuation dropped.
 */
export function findTodo(text: string): string | undefined {
  const m = /\b(?:todos?|to-dos?|remind me|change the state|update the state)\b/i.exec(text);
  if (!m) return undefined;
  const tidy = (t: string): string => t.replace(/[\s.!?]+$/, '').trim();
  const rest = text.slice(m.index + m[0].length).replace(/^\s*(?:items?\b)?\s*(?:[:,\-–—]\s*)?(?:(?:to|that)\s+)?/i, '');
  // The todo ends with its sentence, or where the message goes on with "then".
  const after = tidy(rest.split(/[.!?;](?:\s|$)|,?\s+(?:and\s+)?then\s+/i)[0]!);
  return (after.length > 0 ? after : tidy(text)).slice(0, 120);
}

/**
 * The e-mail `text` asks to send: to its first address (else `someone@example.com`), about what
 * follows "about" or "subject" (else a fixed subject), at most 120 characters.
 */
export function findEmail(text: string): { readonly to: string; readonly subject: string } {
  const to = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/.exec(text)?.[0] ?? 'someone@example.com';
  const about = /\b(?:about|subject)\b\s*:?\s*(.+)$/i
    .exec(text)?.[1]
    ?.replace(/["'\s.!?]+$/, '')
    .replace(/^["']+/, '')
    .trim();
  return { to, subject: about !== undefined && about.length > 0 ? about.slice(0, 120) : 'A message from the agentrx demo' };
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
