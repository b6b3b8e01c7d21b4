/**
 * Request validation of the Gemini API emulator, with the API's semantics and (where they are
 * known) its error messages, in its forms: `* GenerateContentRequest.<field>: <problem>\n` for a
 * field violation, `Invalid value at '<field>' (<type>), <value>` for a value of the wrong type,
 * `Invalid JSON payload received. Unknown name …` for an unknown part field. It checks non-empty
 * `user`/`model` contents of known parts, a text `systemInstruction`, well-formed function
 * declarations, the `generationConfig` ranges, JSON response schemas only with `application/json`,
 * and the function-calling turn order: every model turn of function calls follows a user turn and
 * is answered, in the immediately following user turn, by one function response per call (by
 * name, and by id when the call has one).
 */

type Json = Record<string, unknown>;

const PART_FIELDS = [
  'text',
  'thought',
  'thoughtSignature',
  'inlineData',
  'fileData',
  'functionCall',
  'functionResponse',
  'executableCode',
  'codeExecutionResult',
  'videoMetadata',
  'partMetadata',
  'mediaResolution',
];
const DATA_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];
const MIME_TYPES = ['text/plain', 'application/json', 'application/xml', 'application/yaml', 'text/x.enum'];
const THINKING_LEVELS = ['THINKING_LEVEL_UNSPECIFIED', 'MINIMAL', 'LOW', 'MEDIUM', 'HIGH'];
const FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const PROTO = 'type.googleapis.com/google.ai.generativelanguage.v1beta';

/** The API's message when a function response turn does not follow a function call turn. */
export const RESPONSE_AFTER_CALL = 'Please ensure that function response turn comes immediately after a function call turn.';
/** The API's message when a function call turn follows neither a user turn nor a function response turn. */
export const CALL_AFTER_USER = 'Please ensure that function call turn comes immediately after a user turn or after a function response turn.';
/** The API's message when a function call turn is not answered by as many function responses. */
export const RESPONSE_COUNT =
  'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';

/** Returns the message of the API's 400 `INVALID_ARGUMENT` for an invalid request body, or undefined. */
export function validateGenerateContentRequest(body: unknown): string | undefined {
  if (!isMap(body)) return 'Invalid JSON payload received. Unknown name "": Root element must be a message.';
  return (
    checkContents(body['contents']) ?? checkSystem(body['systemInstruction']) ?? checkTools(body['tools']) ?? checkGenerationConfig(body['generationConfig'])
  );
}

/** `* GenerateContentRequest.<path>: <problem>\n`, the API's form of a field violation. */
function violation(path: string, problem: string): string {
  return `* GenerateContentRequest.${path}: ${problem}\n`;
}

/** `Invalid value at '<path>' (<type>), <value>`, the API's form of a value of the wrong type. */
function invalidValue(path: string, type: string, value: unknown): string {
  return `Invalid value at '${path}' (${type}), ${JSON.stringify(value)}`;
}

function checkContents(contents: unknown): string | undefined {
  if (contents === undefined || (Array.isArray(contents) && contents.length === 0)) return violation('contents', 'contents is not specified');
  if (!Array.isArray(contents)) return invalidValue('contents', `${PROTO}.Content`, contents);
  for (let i = 0; i < contents.length; i++) {
    const problem = checkContent(contents[i] as unknown, `contents[${i}]`);
    if (problem) return problem;
  }
  return checkFunctionTurns(contents as Json[]);
}

function checkContent(c: unknown, path: string): string | undefined {
  if (!isMap(c)) return invalidValue(path, `${PROTO}.Content`, c);
  if (c['role'] !== undefined && c['role'] !== 'user' && c['role'] !== 'model') return 'Please use a valid role: user, model.';
  const parts = c['parts'];
  if (parts === undefined || (Array.isArray(parts) && parts.length === 0)) return violation(`${path}.parts`, 'contents.parts must not be empty.');
  if (!Array.isArray(parts)) return invalidValue(`${path}.parts`, `${PROTO}.Part`, parts);
  for (let j = 0; j < parts.length; j++) {
    const problem = checkPart(parts[j] as unknown, `${path}.parts[${j}]`);
    if (problem) return problem;
  }
  return undefined;
}

function checkPart(p: unknown, path: string): string | undefined {
  if (!isMap(p)) return invalidValue(path, `${PROTO}.Part`, p);
  const unknown = Object.keys(p).find((k) => !PART_FIELDS.includes(k));
  if (unknown !== undefined) return `Invalid JSON payload received. Unknown name "${unknown}" at '${path}': Cannot find field.`;
  const data = DATA_FIELDS.filter((k) => p[k] !== undefined);
  if (data.length === 0) return violation(`${path}.data`, "required oneof field 'data' must have one initialized field");
  if (data.length > 1) return `Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '${data[1]}'`;
  if (p['text'] !== undefined && typeof p['text'] !== 'string') return invalidValue(`${path}.text`, 'TYPE_STRING', p['text']);
  if (p['thought'] !== undefined && typeof p['thought'] !== 'boolean') return invalidValue(`${path}.thought`, 'TYPE_BOOL', p['thought']);
  const signature = p['thoughtSignature'];
  if (signature !== undefined && !(typeof signature === 'string' && BASE64.test(signature))) {
    return invalidValue(`${path}.thought_signature`, 'TYPE_BYTES', signature) + ', Base64 decoding failed';
  }
  if (p['inlineData'] !== undefined) {
    const inline = p['inlineData'];
    if (!isMap(inline)) return invalidValue(`${path}.inline_data`, `${PROTO}.Blob`, inline);
    if (typeof inline['mimeType'] !== 'string' || inline['mimeType'] === '') return violation(`${path}.inline_data.mime_type`, 'mime_type is not specified');
    if (typeof inline['data'] !== 'string' || !BASE64.test(inline['data'])) return invalidValue(`${path}.inline_data.data`, 'TYPE_BYTES', inline['data']);
  }
  if (p['functionCall'] !== undefined) {
    const call = p['functionCall'];
    if (!isMap(call)) return invalidValue(`${path}.function_call`, `${PROTO}.FunctionCall`, call);
    if (typeof call['name'] !== 'string' || call['name'] === '') return violation(`${path}.function_call.name`, 'Name cannot be empty.');
    if (call['id'] !== undefined && typeof call['id'] !== 'string') return invalidValue(`${path}.function_call.id`, 'TYPE_STRING', call['id']);
    if (call['args'] !== undefined && !isMap(call['args']))
      return invalidValue(`${path}.function_call.args`, 'type.googleapis.com/google.protobuf.Struct', call['args']);
  }
  if (p['functionResponse'] !== undefined) {
    const response = p['functionResponse'];
    if (!isMap(response)) return invalidValue(`${path}.function_response`, `${PROTO}.FunctionResponse`, response);
    if (typeof response['name'] !== 'string' || response['name'] === '') return violation(`${path}.function_response.name`, 'Name cannot be empty.');
    if (response['id'] !== undefined && typeof response['id'] !== 'string') return invalidValue(`${path}.function_response.id`, 'TYPE_STRING', response['id']);
    if (response['response'] === undefined) return violation(`${path}.function_response.response`, 'response is not specified');
    if (!isMap(response['response'])) {
      return invalidValue(`${path}.function_response.response`, 'type.googleapis.com/google.protobuf.Struct', response['response']);
    }
  }
  return undefined;
}

/** A function call or response part's name and id. */
interface Named {
  readonly name: string;
  readonly id?: string;
}

function namedParts(c: Json, field: 'functionCall' | 'functionResponse'): Named[] {
  return (c['parts'] as Json[]).filter((p) => p[field] !== undefined).map((p) => p[field] as Named);
}

/** The function-calling turn order: each call turn after a user turn, and answered whole by the next turn. */
function checkFunctionTurns(contents: readonly Json[]): string | undefined {
  let pending: Named[] = [];
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i]!;
    const role = c['role'] ?? 'user';
    const responses = namedParts(c, 'functionResponse');
    if (responses.length > 0 && (pending.length === 0 || role !== 'user')) return RESPONSE_AFTER_CALL;
    if (pending.length > 0) {
      if (role !== 'user' || responses.length !== pending.length) return RESPONSE_COUNT;
      const unused = [...responses];
      for (const call of pending) {
        const k = unused.findIndex((r) => r.name === call.name && (call.id === undefined || r.id === call.id));
        if (k < 0) {
          const id = call.id !== undefined ? ` (id "${call.id}")` : '';
          return (
            `Please ensure that every function call part of the function call turn has a matching function response part (same name, and same id when the call has one): ` +
            `none for function call "${call.name}"${id} in contents[${i}].`
          );
        }
        unused.splice(k, 1);
      }
    }
    pending = role === 'model' ? namedParts(c, 'functionCall') : [];
    if (pending.length > 0 && (i === 0 || (contents[i - 1]!['role'] ?? 'user') !== 'user')) return CALL_AFTER_USER;
  }
  return pending.length > 0 ? RESPONSE_COUNT : undefined;
}

function checkSystem(system: unknown): string | undefined {
  if (system === undefined) return undefined;
  if (!isMap(system)) return invalidValue('system_instruction', `${PROTO}.Content`, system);
  const parts = system['parts'];
  if (parts === undefined || (Array.isArray(parts) && parts.length === 0)) return violation('system_instruction.parts', 'contents.parts must not be empty.');
  if (!Array.isArray(parts)) return invalidValue('system_instruction.parts', `${PROTO}.Part`, parts);
  for (let j = 0; j < parts.length; j++) {
    const path = `system_instruction.parts[${j}]`;
    const problem = checkPart(parts[j] as unknown, path);
    if (problem) return problem;
    if (typeof (parts[j] as Json)['text'] !== 'string') return violation(path, 'system_instruction only supports text parts.');
  }
  return undefined;
}

function checkTools(tools: unknown): string | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return invalidValue('tools', `${PROTO}.Tool`, tools);
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i] as unknown;
    if (!isMap(tool)) return invalidValue(`tools[${i}]`, `${PROTO}.Tool`, tool);
    const declarations = tool['functionDeclarations'];
    if (declarations === undefined) continue;
    if (!Array.isArray(declarations)) return invalidValue(`tools[${i}].function_declarations`, `${PROTO}.FunctionDeclaration`, declarations);
    for (let j = 0; j < declarations.length; j++) {
      const problem = checkDeclaration(declarations[j] as unknown, `tools[${i}].function_declarations[${j}]`);
      if (problem) return problem;
    }
  }
  return undefined;
}

function checkDeclaration(d: unknown, path: string): string | undefined {
  if (!isMap(d)) return invalidValue(path, `${PROTO}.FunctionDeclaration`, d);
  const name = d['name'];
  if (name === undefined || name === '') return violation(`${path}.name`, 'Name cannot be empty.');
  if (typeof name !== 'string') return invalidValue(`${path}.name`, 'TYPE_STRING', name);
  if (!FUNCTION_NAME.test(name)) {
    return violation(
      `${path}.name`,
      'Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.',
    );
  }
  if (d['description'] !== undefined && typeof d['description'] !== 'string') return invalidValue(`${path}.description`, 'TYPE_STRING', d['description']);
  if (d['parameters'] !== undefined && d['parametersJsonSchema'] !== undefined) {
    return violation(`${path}.parameters`, '`parameters` and `parameters_json_schema` cannot both be set.');
  }
  if (d['parameters'] !== undefined && !isMap(d['parameters'])) return invalidValue(`${path}.parameters`, `${PROTO}.Schema`, d['parameters']);
  const jsonSchema = d['parametersJsonSchema'];
  if (jsonSchema !== undefined && !isMap(jsonSchema)) return violation(`${path}.parameters_json_schema`, 'the schema must be a JSON object.');
  return undefined;
}

function checkGenerationConfig(g: unknown): string | undefined {
  if (g === undefined) return undefined;
  if (!isMap(g)) return invalidValue('generation_config', `${PROTO}.GenerationConfig`, g);
  const at = (field: string): string => `generation_config.${field}`;
  return (
    checkRange(g['temperature'], at('temperature'), 0, 2) ??
    checkRange(g['topP'], at('top_p'), 0, 1) ??
    checkInteger(g['topK'], at('top_k'), 1) ??
    checkInteger(g['maxOutputTokens'], at('max_output_tokens'), 1) ??
    checkInteger(g['candidateCount'], at('candidate_count'), 1) ??
    (g['candidateCount'] !== undefined && g['candidateCount'] !== 1
      ? violation(at('candidate_count'), 'the emulator answers one candidate only.')
      : undefined) ??
    checkOutputFormat(g) ??
    checkThinking(g['thinkingConfig'])
  );
}

function checkRange(v: unknown, path: string, min: number, max: number): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) return invalidValue(path, 'TYPE_FLOAT', v);
  const field = path.slice(path.lastIndexOf('.') + 1);
  return v < min || v > max ? violation(path, `${field} must be in the range [${min}, ${max}].`) : undefined;
}

function checkInteger(v: unknown, path: string, min: number): string | undefined {
  if (v === undefined) return undefined;
  if (!Number.isInteger(v)) return invalidValue(path, 'TYPE_INT32', v);
  const field = path.slice(path.lastIndexOf('.') + 1);
  return (v as number) < min ? violation(path, `${field} must be ${min === 1 ? 'positive' : `at least ${min}`}.`) : undefined;
}

function checkOutputFormat(g: Json): string | undefined {
  const mime = g['responseMimeType'];
  if (mime !== undefined && !(typeof mime === 'string' && MIME_TYPES.includes(mime))) {
    return violation(
      'generation_config.response_mime_type',
      'allowed mimetypes are `text/plain`, `application/json`, `application/xml`, `application/yaml` and `text/x.enum`.',
    );
  }
  const schema = g['responseSchema'];
  const jsonSchema = g['responseJsonSchema'];
  if (schema !== undefined && jsonSchema !== undefined) {
    return violation('generation_config.response_schema', '`response_schema` and `response_json_schema` cannot both be set.');
  }
  if (schema !== undefined && !isMap(schema)) return invalidValue('generation_config.response_schema', `${PROTO}.Schema`, schema);
  if (jsonSchema !== undefined && !isMap(jsonSchema)) return violation('generation_config.response_json_schema', 'the schema must be a JSON object.');
  const field = schema !== undefined ? 'response_schema' : 'response_json_schema';
  const allowed = schema !== undefined ? ['application/json', 'text/x.enum'] : ['application/json'];
  if ((schema !== undefined || jsonSchema !== undefined) && !allowed.includes(mime as string)) {
    return violation(
      `generation_config.${field}`,
      `\`${field}\` is only supported with \`response_mime_type\` ${allowed.map((m) => `\`${m}\``).join(' or ')}.`,
    );
  }
  return undefined;
}

function checkThinking(t: unknown): string | undefined {
  if (t === undefined) return undefined;
  const path = 'generation_config.thinking_config';
  if (!isMap(t)) return invalidValue(path, `${PROTO}.ThinkingConfig`, t);
  if (t['includeThoughts'] !== undefined && typeof t['includeThoughts'] !== 'boolean')
    return invalidValue(`${path}.include_thoughts`, 'TYPE_BOOL', t['includeThoughts']);
  const budget = t['thinkingBudget'];
  if (budget !== undefined && !Number.isInteger(budget)) return invalidValue(`${path}.thinking_budget`, 'TYPE_INT32', budget);
  if (budget !== undefined && (budget as number) < -1) {
    return violation(`${path}.thinking_budget`, 'thinking_budget must be -1 (dynamic), 0 (off) or a positive number of tokens.');
  }
  const level = t['thinkingLevel'];
  if (level !== undefined && !THINKING_LEVELS.includes(level as string))
    return invalidValue(`${path}.thinking_level`, `${PROTO}.ThinkingConfig.ThinkingLevel`, level);
  return undefined;
}

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
