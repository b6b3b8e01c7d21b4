import { reasoningContent } from './answers.js';
import { emptyArray, invalidType, invalidValue, isMap, missing, problem, type RequestProblem } from './problems.js';

/**
 * Validation of a Responses request's `input`, with the API's semantics: a string, or a non-empty
 * list of `message`, `function_call`, `function_call_output` and `reasoning` items of the right
 * shapes; every `function_call` answered by a `function_call_output` with its `call_id` before the
 * next message item (and no output without its call); every `reasoning` item followed by the
 * output it preceded; reasoning items carrying the `encrypted_content` the emulator issued for them,
 * or (with `store` left on) the id of one it served.
 */

type Json = Record<string, unknown>;

/** What the input checks need besides the input. */
export interface InputContext {
  /** The request's `store` (default true). */
  readonly store: boolean;
  /** Ids of the reasoning items the emulator has served (what `store` would have kept). */
  readonly servedReasoning: ReadonlySet<string>;
}

const ITEM_TYPES = ['message', 'function_call', 'function_call_output', 'reasoning'];
const ROLES = ['assistant', 'system', 'developer', 'user'];
const INPUT_PARTS = ['input_text', 'input_image', 'input_file'];
const OUTPUT_PARTS = ['output_text', 'refusal'];

/** The problem with `input`, or undefined. */
export function checkInput(input: unknown, ctx: InputContext): RequestProblem | undefined {
  if (input === undefined) return missing('input');
  if (typeof input === 'string') return undefined;
  if (!Array.isArray(input)) return invalidType('input', 'one of a string or an array of input items', input);
  if (input.length === 0) return emptyArray('input');
  const types: string[] = [];
  for (let i = 0; i < input.length; i++) {
    const item = input[i] as unknown;
    const at = `input[${i}]`;
    if (!isMap(item)) return invalidType(at, 'an object', item);
    // An item without `type` is a message (the API's "easy input message").
    const type = item['type'] ?? 'message';
    if (typeof type !== 'string' || !ITEM_TYPES.includes(type)) return invalidValue(`${at}.type`, type, ITEM_TYPES);
    const shape = type === 'message' ? checkMessage(item, at) : type === 'reasoning' ? checkReasoning(item, at) : checkCall(item, at, type);
    if (shape) return shape;
    types.push(type === 'message' ? `message:${String(item['role'])}` : type);
  }
  return checkPairing(input as Json[], types) ?? checkReasoningItems(input as Json[], types, ctx);
}

/** Function calls answered before the next message, outputs only for calls made. */
function checkPairing(items: readonly Json[], types: readonly string[]): RequestProblem | undefined {
  const calls = new Set<string>();
  const pending: string[] = [];
  const unanswered = (): RequestProblem => problem(`No tool output found for function call ${pending[0]!}.`, 'input');
  for (let i = 0; i < items.length; i++) {
    const type = types[i]!;
    if (type.startsWith('message:') && pending.length > 0) return unanswered();
    const callId = items[i]!['call_id'] as string;
    if (type === 'function_call') {
      calls.add(callId);
      pending.push(callId);
    }
    if (type === 'function_call_output') {
      if (!calls.has(callId)) return problem(`No tool call found for function call output with call_id ${callId}.`, 'input');
      if (pending.includes(callId)) pending.splice(pending.indexOf(callId), 1);
    }
  }
  return pending.length > 0 ? unanswered() : undefined;
}

/** Each reasoning item followed by an assistant output, and its content one the emulator can "decrypt". */
function checkReasoningItems(items: readonly Json[], types: readonly string[], ctx: InputContext): RequestProblem | undefined {
  for (let i = 0; i < items.length; i++) {
    if (types[i] !== 'reasoning') continue;
    const id = items[i]!['id'] as string;
    let next = i + 1;
    while (types[next] === 'reasoning') next++;
    if (types[next] !== 'function_call' && types[next] !== 'message:assistant') {
      return problem(`Item '${id}' of type 'reasoning' was provided without its required following item.`, 'input');
    }
    const content = items[i]!['encrypted_content'];
    if (typeof content === 'string') {
      if (content !== reasoningContent(id)) {
        const reason = 'Reason: Encrypted content could not be decrypted or parsed.';
        return problem(`The encrypted content for item ${id} could not be verified. ${reason}`, null, 'invalid_encrypted_content');
      }
    } else if (!ctx.store) {
      return problem(
        `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. ` +
          'Try again with `store` set to true, or remove this item from your input.',
        'input',
      );
    } else if (!ctx.servedReasoning.has(id)) return problem(`Item with id '${id}' not found.`, 'input');
  }
  return undefined;
}

function checkMessage(item: Json, at: string): RequestProblem | undefined {
  const role = item['role'];
  if (role === undefined) return missing(`${at}.role`);
  if (typeof role !== 'string' || !ROLES.includes(role)) return invalidValue(`${at}.role`, role, ROLES);
  const content = item['content'];
  if (content === undefined) return missing(`${at}.content`);
  if (typeof content === 'string') return undefined;
  if (!Array.isArray(content)) return invalidType(`${at}.content`, 'one of a string or an array of content parts', content);
  const allowed = role === 'assistant' ? OUTPUT_PARTS : INPUT_PARTS;
  for (let j = 0; j < content.length; j++) {
    const part = content[j] as unknown;
    const where = `${at}.content[${j}]`;
    if (!isMap(part)) return invalidType(where, 'an object', part);
    const type = part['type'];
    if (type === undefined) return missing(`${where}.type`);
    if (typeof type !== 'string' || !allowed.includes(type)) return invalidValue(where, type, allowed);
    const field = type === 'input_text' || type === 'output_text' ? 'text' : type === 'refusal' ? 'refusal' : undefined;
    if (field !== undefined && part[field] === undefined) return missing(`${where}.${field}`);
    if (field !== undefined && typeof part[field] !== 'string') return invalidType(`${where}.${field}`, 'a string', part[field]);
    if (type === 'input_image' && typeof part['image_url'] !== 'string' && typeof part['file_id'] !== 'string') {
      return problem(`Invalid '${where}': an image needs an 'image_url' or a 'file_id'.`, where, 'missing_required_parameter');
    }
    if (type === 'input_file' && !['file_id', 'file_data', 'file_url'].some((k) => typeof part[k] === 'string')) {
      return problem(`Invalid '${where}': a file needs a 'file_id', 'file_data' or 'file_url'.`, where, 'missing_required_parameter');
    }
  }
  return undefined;
}

function checkCall(item: Json, at: string, type: string): RequestProblem | undefined {
  const fields = type === 'function_call' ? ['call_id', 'name', 'arguments'] : ['call_id'];
  for (const field of fields) {
    if (item[field] === undefined) return missing(`${at}.${field}`);
    if (typeof item[field] !== 'string') return invalidType(`${at}.${field}`, 'a string', item[field]);
  }
  if (type === 'function_call') return undefined;
  const output = item['output'];
  if (output === undefined) return missing(`${at}.output`);
  if (typeof output !== 'string' && !Array.isArray(output)) return invalidType(`${at}.output`, 'one of a string or an array of input content', output);
  return undefined;
}

function checkReasoning(item: Json, at: string): RequestProblem | undefined {
  if (item['id'] === undefined) return missing(`${at}.id`);
  if (typeof item['id'] !== 'string') return invalidType(`${at}.id`, 'a string', item['id']);
  const summary = item['summary'];
  if (summary === undefined) return missing(`${at}.summary`);
  if (!Array.isArray(summary)) return invalidType(`${at}.summary`, 'an array', summary);
  for (let j = 0; j < summary.length; j++) {
    const part = summary[j] as unknown;
    const where = `${at}.summary[${j}]`;
    if (!isMap(part)) return invalidType(where, 'an object', part);
    if (part['type'] !== 'summary_text') return invalidValue(`${where}.type`, part['type'], ['summary_text']);
    if (typeof part['text'] !== 'string') return part['text'] === undefined ? missing(`${where}.text`) : invalidType(`${where}.text`, 'a string', part['text']);
  }
  const content = item['encrypted_content'];
  if (content !== undefined && content !== null && typeof content !== 'string') return invalidType(`${at}.encrypted_content`, 'a string', content);
  return undefined;
}
