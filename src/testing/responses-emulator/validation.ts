import { checkInput, type InputContext } from './input-validation.js';
import { emptyString, invalidType, invalidValue, isMap, missing, outOfRange, problem, type RequestProblem } from './problems.js';

export type { RequestProblem } from './problems.js';

/**
 * Request validation of the Responses emulator, with the API's semantics and (where they are
 * known) its error messages: known parameters only, a model, the input (see `checkInput`), function
 * tools with object schemas, sampling ranges, `max_output_tokens` ≥ 16, a `text.format` (a
 * `json_schema` one with a name and an object schema), and strict schemas (`strict: true`) that
 * close every object and require every property. Parameters that need server-side state
 * (`previous_response_id`, `conversation`, `prompt`, `background`) are refused: the emulator keeps
 * none, so the client must send the whole conversation in `input`.
 */

type Json = Record<string, unknown>;

const KNOWN = new Set([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'temperature',
  'top_p',
  'top_logprobs',
  'max_output_tokens',
  'max_tool_calls',
  'text',
  'store',
  'include',
  'reasoning',
  'stream',
  'stream_options',
  'metadata',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'context_management',
  'moderation',
  'service_tier',
  'truncation',
  'previous_response_id',
  'conversation',
  'prompt',
  'background',
]);
const STATEFUL = ['previous_response_id', 'conversation', 'prompt'];
const INCLUDABLE = [
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
];
const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];
const SUMMARIES = ['auto', 'concise', 'detailed'];
const FORMATS = ['text', 'json_schema', 'json_object'];
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Returns why OpenAI would answer 400 `invalid_request_error` to a request body, or undefined. */
export function validateResponsesRequest(body: unknown, ctx: Omit<InputContext, 'store'>): RequestProblem | undefined {
  if (!isMap(body)) return problem('The request body must be a JSON object.', null);
  const unknown = Object.keys(body).find((k) => !KNOWN.has(k));
  if (unknown !== undefined) return problem(`Unknown parameter: '${unknown}'.`, unknown, 'unknown_parameter');
  const stateful = STATEFUL.find((k) => body[k] !== undefined && body[k] !== null);
  if (stateful !== undefined || body['background'] === true) {
    const param = stateful ?? 'background';
    const message = `The emulator keeps no server-side state, so '${param}' is not supported: send the whole conversation in 'input' instead.`;
    return problem(message, param, 'unsupported_parameter');
  }
  return (
    checkModel(body['model']) ??
    checkScalars(body) ??
    checkSampling(body) ??
    checkTools(body['tools']) ??
    checkText(body['text']) ??
    checkReasoning(body['reasoning']) ??
    checkInclude(body['include']) ??
    checkInput(body['input'], { ...ctx, store: body['store'] !== false })
  );
}

function checkModel(model: unknown): RequestProblem | undefined {
  if (model === undefined) return missing('model');
  if (typeof model !== 'string') return invalidType('model', 'a string', model);
  return model === '' ? emptyString('model') : undefined;
}

function checkScalars(body: Json): RequestProblem | undefined {
  for (const name of ['stream', 'store', 'parallel_tool_calls', 'background']) {
    if (body[name] !== undefined && body[name] !== null && typeof body[name] !== 'boolean') return invalidType(name, 'a boolean', body[name]);
  }
  const instructions = body['instructions'];
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string') return invalidType('instructions', 'a string', instructions);
  const choice = body['tool_choice'];
  if (typeof choice === 'string' && !['none', 'auto', 'required'].includes(choice)) return invalidValue('tool_choice', choice, ['none', 'auto', 'required']);
  if (choice !== undefined && typeof choice !== 'string' && !isMap(choice)) return invalidType('tool_choice', 'one of a string or an object', choice);
  return undefined;
}

function checkSampling(body: Json): RequestProblem | undefined {
  for (const [name, max] of [
    ['temperature', 2],
    ['top_p', 1],
  ] as const) {
    const v = body[name];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number') return invalidType(name, 'a number', v);
    const range = outOfRange(name, v, 0, max, false);
    if (range) return range;
  }
  const max = body['max_output_tokens'];
  if (max === undefined || max === null) return undefined;
  if (!Number.isInteger(max)) return invalidType('max_output_tokens', 'an integer', max);
  return outOfRange('max_output_tokens', max as number, 16, Number.MAX_SAFE_INTEGER, true);
}

function checkTools(tools: unknown): RequestProblem | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return invalidType('tools', 'an array', tools);
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i] as unknown;
    const at = `tools[${i}]`;
    if (!isMap(t)) return invalidType(at, 'an object', t);
    if (t['type'] === undefined) return missing(`${at}.type`);
    if (t['type'] !== 'function') {
      return problem(`The emulator serves function tools only: '${at}.type' '${String(t['type'])}' is not supported.`, `${at}.type`, 'unsupported_value');
    }
    const name = t['name'];
    if (name === undefined) return missing(`${at}.name`);
    if (typeof name !== 'string') return invalidType(`${at}.name`, 'a string', name);
    if (!NAME.test(name)) return badName(`${at}.name`);
    if (t['strict'] !== undefined && t['strict'] !== null && typeof t['strict'] !== 'boolean') return invalidType(`${at}.strict`, 'a boolean', t['strict']);
    const schema = t['parameters'];
    if (schema === undefined) return missing(`${at}.parameters`);
    if (schema === null) continue;
    if (!isMap(schema)) return invalidType(`${at}.parameters`, 'an object', schema);
    if (schema['type'] !== 'object') {
      const got = JSON.stringify(schema['type'] ?? null);
      return problem(
        `Invalid schema for function '${name}': schema must be a JSON Schema of 'type: "object"', got 'type: ${got}'.`,
        `${at}.parameters`,
        'invalid_function_parameters',
      );
    }
    const strictProblem = t['strict'] === true ? strictSchemaProblem(schema, []) : undefined;
    if (strictProblem) return problem(`Invalid schema for function '${name}': ${strictProblem}`, `${at}.parameters`, 'invalid_function_parameters');
  }
  return undefined;
}

function checkText(text: unknown): RequestProblem | undefined {
  if (text === undefined || text === null) return undefined;
  if (!isMap(text)) return invalidType('text', 'an object', text);
  const verbosity = text['verbosity'];
  if (verbosity !== undefined && verbosity !== null && !['low', 'medium', 'high'].includes(verbosity as string)) {
    return invalidValue('text.verbosity', verbosity, ['low', 'medium', 'high']);
  }
  const format = text['format'];
  if (format === undefined || format === null) return undefined;
  if (!isMap(format)) return invalidType('text.format', 'an object', format);
  if (format['type'] === undefined) return missing('text.format.type');
  if (!FORMATS.includes(format['type'] as string)) return invalidValue('text.format.type', format['type'], FORMATS);
  if (format['type'] !== 'json_schema') return undefined;
  const name = format['name'];
  if (name === undefined) return missing('text.format.name');
  if (typeof name !== 'string') return invalidType('text.format.name', 'a string', name);
  if (!NAME.test(name)) return badName('text.format.name');
  const schema = format['schema'];
  if (schema === undefined) return missing('text.format.schema');
  if (!isMap(schema)) return invalidType('text.format.schema', 'an object', schema);
  if (format['strict'] !== undefined && format['strict'] !== null && typeof format['strict'] !== 'boolean') {
    return invalidType('text.format.strict', 'a boolean', format['strict']);
  }
  const strictProblem = format['strict'] === true ? strictSchemaProblem(schema, []) : undefined;
  return strictProblem ? problem(`Invalid schema for response_format '${name}': ${strictProblem}`, 'text.format.schema', 'invalid_json_schema') : undefined;
}

function checkReasoning(reasoning: unknown): RequestProblem | undefined {
  if (reasoning === undefined || reasoning === null) return undefined;
  if (!isMap(reasoning)) return invalidType('reasoning', 'an object', reasoning);
  const { effort, summary } = reasoning;
  if (effort !== undefined && effort !== null && !EFFORTS.includes(effort as string)) return invalidValue('reasoning.effort', effort, EFFORTS);
  if (summary !== undefined && summary !== null && !SUMMARIES.includes(summary as string)) return invalidValue('reasoning.summary', summary, SUMMARIES);
  return undefined;
}

function checkInclude(include: unknown): RequestProblem | undefined {
  if (include === undefined || include === null) return undefined;
  if (!Array.isArray(include)) return invalidType('include', 'an array', include);
  const i = include.findIndex((v) => !INCLUDABLE.includes(v as string));
  return i < 0 ? undefined : invalidValue(`include[${i}]`, include[i], INCLUDABLE);
}

function badName(param: string): RequestProblem {
  return problem(`Invalid '${param}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`, param, 'invalid_value');
}

/**
 * What strict structured outputs refuse in `schema` (at `context`, the path inside the root
 * schema): an object that does not set `additionalProperties: false`, or whose `required` does not
 * list every property. Worded as the API words it; undefined when the schema is fine.
 */
function strictSchemaProblem(schema: Json, context: readonly string[]): string | undefined {
  const where = `In context=${pythonTuple(context)}, `;
  const properties = isMap(schema['properties']) ? schema['properties'] : undefined;
  if (schema['type'] === 'object' || properties) {
    if (schema['additionalProperties'] !== false) return `${where}'additionalProperties' is required to be supplied and to be false.`;
    const keys = Object.keys(properties ?? {});
    const required = Array.isArray(schema['required']) ? (schema['required'] as unknown[]) : undefined;
    const absent = keys.find((k) => !required?.includes(k));
    if (absent !== undefined) return `${where}'required' is required to be supplied and to be an array including every key in properties. Missing '${absent}'.`;
    for (const k of keys) {
      const inner = properties![k];
      const found = isMap(inner) ? strictSchemaProblem(inner, [...context, 'properties', k]) : undefined;
      if (found) return found;
    }
  }
  if (isMap(schema['items'])) return strictSchemaProblem(schema['items'], [...context, 'items']);
  return undefined;
}

/** A path as Python prints a tuple: `()`, `('items',)`, `('properties', 'a')`. */
function pythonTuple(parts: readonly string[]): string {
  const quoted = parts.map((p) => `'${p}'`);
  return quoted.length === 1 ? `(${quoted[0]},)` : `(${quoted.join(', ')})`;
}
