import { thinkingSignature } from './answers.js';

/**
 * Request validation of the Anthropic Messages emulator, with the API's semantics and (where they
 * are known) its error messages: a model, `max_tokens`, non-empty `user`/`assistant` messages
 * starting with `user`, known content blocks, a top-level `system`, well-formed tools, sampling
 * ranges, the extended-thinking budget, thinking signatures that verify, and every `tool_use` id
 * answered by a `tool_result` block in the immediately following user message (and no
 * `tool_result` without its `tool_use`).
 */

type Json = Record<string, unknown>;

const BLOCK_TYPES = ['text', 'image', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking'];
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;
const THINKING_DOCS = 'https://docs.claude.com/en/docs/build-with-claude/extended-thinking';

/** Returns the message of the API's 400 `invalid_request_error` for an invalid request body, or undefined. */
export function validateMessagesRequest(body: unknown): string | undefined {
  if (!isMap(body)) return 'Request body must be a JSON object.';
  return (
    checkModel(body) ??
    checkMaxTokens(body['max_tokens']) ??
    checkSampling(body) ??
    checkThinking(body) ??
    checkSystem(body['system']) ??
    checkTools(body['tools']) ??
    (body['stream'] !== undefined && typeof body['stream'] !== 'boolean' ? 'stream: Input should be a valid boolean' : undefined) ??
    checkMessages(body['messages'])
  );
}

function checkModel(body: Json): string | undefined {
  const model = body['model'];
  if (model === undefined) return 'model: Field required';
  if (typeof model !== 'string') return 'model: Input should be a valid string';
  if (model === '') return 'model: String should have at least 1 character';
  return undefined;
}

function checkMaxTokens(v: unknown): string | undefined {
  if (v === undefined) return 'max_tokens: Field required';
  if (!Number.isInteger(v)) return 'max_tokens: Input should be a valid integer';
  if ((v as number) < 1) return 'max_tokens: Input should be greater than or equal to 1';
  return undefined;
}

function checkSampling(body: Json): string | undefined {
  for (const name of ['temperature', 'top_p']) {
    const v = body[name];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) return `${name}: Input should be a valid number`;
    if (v < 0) return `${name}: Input should be greater than or equal to 0`;
    if (v > 1) return `${name}: Input should be less than or equal to 1`;
  }
  const topK = body['top_k'];
  if (topK !== undefined && !(Number.isInteger(topK) && (topK as number) >= 0)) return 'top_k: Input should be a non-negative integer';
  return undefined;
}

function checkThinking(body: Json): string | undefined {
  const thinking = body['thinking'];
  if (thinking === undefined) return undefined;
  if (!isMap(thinking)) return 'thinking: Input should be a valid dictionary';
  if (!['enabled', 'disabled', 'adaptive'].includes(thinking['type'] as string)) {
    return `thinking: Input tag '${String(thinking['type'])}' found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'`;
  }
  if (thinking['type'] !== 'enabled') return undefined;
  const budget = thinking['budget_tokens'];
  if (budget === undefined) return 'thinking.enabled.budget_tokens: Field required';
  if (!Number.isInteger(budget)) return 'thinking.enabled.budget_tokens: Input should be a valid integer';
  if ((budget as number) < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if ((budget as number) >= (body['max_tokens'] as number)) {
    return `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. Please consult our documentation at ${THINKING_DOCS}#max-tokens-and-context-window-size`;
  }
  if (body['temperature'] !== undefined && body['temperature'] !== 1) {
    return `\`temperature\` may only be set to 1 when thinking is enabled. Please consult our documentation at ${THINKING_DOCS}#feature-compatibility`;
  }
  if (body['top_p'] !== undefined && (body['top_p'] as number) < 0.95) {
    return `\`top_p\` must be greater than or equal to 0.95 or unset when thinking is enabled. Please consult our documentation at ${THINKING_DOCS}#feature-compatibility`;
  }
  if (body['top_k'] !== undefined)
    return `\`top_k\` must be unset when thinking is enabled. Please consult our documentation at ${THINKING_DOCS}#feature-compatibility`;
  return undefined;
}

function checkSystem(system: unknown): string | undefined {
  if (system === undefined || typeof system === 'string') return undefined;
  if (!Array.isArray(system)) return 'system: Input should be a valid string or a list of text blocks';
  for (let i = 0; i < system.length; i++) {
    const b = system[i] as unknown;
    if (!isMap(b) || b['type'] !== 'text') return `system.${i}.type: Input should be 'text'`;
    if (typeof b['text'] !== 'string') return `system.${i}.text: Field required`;
    if (b['text'] === '') return 'system: text content blocks must be non-empty';
  }
  return undefined;
}

function checkTools(tools: unknown): string | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return 'tools: Input should be a valid list';
  const names = new Set<string>();
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i] as unknown;
    if (!isMap(t)) return `tools.${i}: Input should be a valid dictionary`;
    const name = t['name'];
    if (name === undefined) return `tools.${i}.name: Field required`;
    if (typeof name !== 'string') return `tools.${i}.name: Input should be a valid string`;
    // A typed tool other than `custom` is a server tool (web search, code execution…): accepted as given.
    const custom = t['type'] === undefined || t['type'] === 'custom';
    if (custom) {
      if (!TOOL_NAME.test(name)) return `tools.${i}.custom.name: String should match pattern '${TOOL_NAME.source}'`;
      const schema = t['input_schema'];
      if (schema === undefined) return `tools.${i}.custom.input_schema: Field required`;
      if (!isMap(schema)) return `tools.${i}.custom.input_schema: Input should be a valid dictionary`;
      if (schema['type'] !== 'object') return `tools.${i}.custom.input_schema.type: Input should be 'object'`;
    }
    if (names.has(name)) return 'tools: Tool names must be unique.';
    names.add(name);
  }
  return undefined;
}

function checkMessages(messages: unknown): string | undefined {
  if (messages === undefined) return 'messages: Field required';
  if (!Array.isArray(messages)) return 'messages: Input should be a valid list';
  if (messages.length === 0) return 'messages: at least one message is required';
  const seenToolUses = new Set<string>();
  let previousToolUses: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as unknown;
    if (!isMap(m)) return `messages.${i}: Input should be a valid dictionary`;
    const role = m['role'];
    if (role === 'system') {
      return 'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.';
    }
    if (role !== 'user' && role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (i === 0 && role !== 'user') return 'messages: first message must use the "user" role';
    const content = m['content'];
    if (content === undefined) return `messages.${i}.content: Field required`;
    if (typeof content !== 'string' && !Array.isArray(content)) return `messages.${i}.content: Input should be a valid string or a list of content blocks`;
    const last = i === messages.length - 1;
    if (content.length === 0 && !(last && role === 'assistant')) {
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    }
    const blocks: unknown[] = typeof content !== 'string' ? content : content === '' ? [] : [{ type: 'text', text: content }];
    const toolUses: string[] = [];
    const answered = new Set<string>();
    for (let j = 0; j < blocks.length; j++) {
      const b = blocks[j];
      const problem = checkBlock(b, `messages.${i}.content.${j}`, role);
      if (problem) return typeof content === 'string' ? problem.replace(`.content.${j}`, '.content') : problem;
      const block = b as Json;
      if (block['type'] === 'tool_use') {
        const id = block['id'] as string;
        if (seenToolUses.has(id)) return `messages.${i}.content.${j}: \`tool_use\` ids must be unique`;
        seenToolUses.add(id);
        toolUses.push(id);
      }
      if (block['type'] === 'tool_result') {
        const id = block['tool_use_id'] as string;
        if (!previousToolUses.includes(id)) {
          return (
            `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. ` +
            'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.'
          );
        }
        answered.add(id);
      }
    }
    const unanswered = previousToolUses.filter((id) => !answered.has(id));
    if (unanswered.length > 0) return unansweredToolUses(i - 1, unanswered);
    previousToolUses = toolUses;
  }
  if (previousToolUses.length > 0) return unansweredToolUses(messages.length - 1, previousToolUses);
  return undefined;
}

function unansweredToolUses(index: number, ids: readonly string[]): string {
  return (
    `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids.join(', ')}. ` +
    'Each `tool_use` block must have a corresponding `tool_result` block in the next message.'
  );
}

/** The problem with one content block at `at` (`messages.N.content.M`) of a `role` message, or undefined. */
function checkBlock(b: unknown, at: string, role: 'user' | 'assistant'): string | undefined {
  if (!isMap(b)) return `${at}: Input should be a valid dictionary`;
  const type = b['type'];
  if (typeof type !== 'string' || !BLOCK_TYPES.includes(type)) {
    return `${at}: Input tag '${String(type)}' found using 'type' does not match any of the expected tags: ${BLOCK_TYPES.map((t) => `'${t}'`).join(', ')}`;
  }
  const onlyIn = (wanted: 'user' | 'assistant'): string | undefined =>
    role === wanted ? undefined : `${at}: \`${type}\` blocks can only be in \`${wanted}\` messages`;
  switch (type) {
    case 'text':
      return checkText(b, at);
    case 'image':
      return checkImage(b, at);
    case 'tool_use': {
      const wrongRole = onlyIn('assistant');
      if (wrongRole) return wrongRole;
      if (typeof b['id'] !== 'string') return `${at}.tool_use.id: Field required`;
      if (!TOOL_USE_ID.test(b['id'])) return `${at}.tool_use.id: String should match pattern '${TOOL_USE_ID.source}'`;
      if (typeof b['name'] !== 'string' || b['name'] === '') return `${at}.tool_use.name: Field required`;
      if (!isMap(b['input'])) return `${at}.tool_use.input: Input should be a valid dictionary`;
      return undefined;
    }
    case 'tool_result':
      return onlyIn('user') ?? checkToolResult(b, at);
    case 'thinking': {
      const wrongRole = onlyIn('assistant');
      if (wrongRole) return wrongRole;
      if (typeof b['thinking'] !== 'string') return `${at}.thinking.thinking: Field required`;
      if (typeof b['signature'] !== 'string') return `${at}.thinking.signature: Field required`;
      if (b['signature'] !== thinkingSignature(b['thinking'])) return `${at}: Invalid \`signature\` in \`thinking\` block`;
      return undefined;
    }
    default:
      return onlyIn('assistant') ?? (typeof b['data'] === 'string' ? undefined : `${at}.redacted_thinking.data: Field required`);
  }
}

function checkText(b: Json, at: string): string | undefined {
  if (typeof b['text'] !== 'string') return `${at}.text.text: Field required`;
  if (b['text'] === '') return 'messages: text content blocks must be non-empty';
  if (b['text'].trim() === '') return 'messages: text content blocks must contain non-whitespace text';
  return undefined;
}

function checkImage(b: Json, at: string): string | undefined {
  const source = b['source'];
  if (!isMap(source)) return `${at}.image.source: Field required`;
  if (source['type'] === 'base64') {
    if (typeof source['media_type'] !== 'string') return `${at}.image.source.base64.media_type: Field required`;
    if (typeof source['data'] !== 'string') return `${at}.image.source.base64.data: Field required`;
    return undefined;
  }
  if (source['type'] === 'url') return typeof source['url'] === 'string' ? undefined : `${at}.image.source.url.url: Field required`;
  return `${at}.image.source: Input tag '${String(source['type'])}' found using 'type' does not match any of the expected tags: 'base64', 'url'`;
}

function checkToolResult(b: Json, at: string): string | undefined {
  if (typeof b['tool_use_id'] !== 'string') return `${at}.tool_result.tool_use_id: Field required`;
  if (b['is_error'] !== undefined && typeof b['is_error'] !== 'boolean') return `${at}.tool_result.is_error: Input should be a valid boolean`;
  const content = b['content'];
  if (content === undefined || typeof content === 'string') return undefined;
  if (!Array.isArray(content)) return `${at}.tool_result.content: Input should be a valid string or a list of content blocks`;
  for (let k = 0; k < content.length; k++) {
    const inner = content[k] as unknown;
    const where = `${at}.tool_result.content.${k}`;
    if (!isMap(inner) || (inner['type'] !== 'text' && inner['type'] !== 'image')) {
      return `${where}: Input tag '${String(isMap(inner) ? inner['type'] : inner)}' found using 'type' does not match any of the expected tags: 'text', 'image'`;
    }
    const problem = inner['type'] === 'text' ? checkText(inner, where) : checkImage(inner, where);
    if (problem) return problem;
  }
  return undefined;
}

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
