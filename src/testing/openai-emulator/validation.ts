/**
 * Request validation of the chat emulator, with OpenAI's semantics and error messages: a model,
 * non-empty messages of known roles, well-formed tools, and every assistant `tool_call` id
 * answered by exactly one `tool` message before the next non-tool message (an id that two calls
 * of one message share needs two).
 */

type Json = Record<string, unknown>;

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** Returns the OpenAI-style 400 reason for an invalid request, or undefined. */
export function validateCompletionRequest(body: unknown): { message: string; param: string | null } | undefined {
  if (!isMap(body)) return { message: 'The request body must be a JSON object.', param: null };
  if (typeof body['model'] !== 'string' || body['model'] === '') return { message: 'you must provide a model parameter', param: 'model' };
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) return { message: "[] is too short - 'messages'", param: 'messages' };
  const tools = body['tools'];
  if (tools !== undefined) {
    if (!Array.isArray(tools) || tools.length === 0) return { message: "[] is too short - 'tools'", param: 'tools' };
    for (let i = 0; i < tools.length; i++) {
      const t = tools[i] as unknown;
      if (!isMap(t) || t['type'] !== 'function' || !isMap(t['function']) || typeof t['function']['name'] !== 'string') {
        return { message: `Invalid tool at tools[${i}]: expected {type:'function', function:{name,…}}.`, param: `tools[${i}]` };
      }
    }
  }
  const format = responseFormatProblem(body['response_format']);
  if (format) return format;
  for (const [name, min, max] of [
    ['temperature', 0, 2],
    ['top_p', 0, 1],
  ] as const) {
    const v = body[name];
    if (v !== undefined && (typeof v !== 'number' || v < min || v > max))
      return { message: `Invalid '${name}': expected a number from ${min} to ${max}.`, param: name };
  }
  if (body['max_tokens'] !== undefined && !(Number.isInteger(body['max_tokens']) && (body['max_tokens'] as number) >= 1))
    return { message: "Invalid 'max_tokens': expected an integer of at least 1.", param: 'max_tokens' };
  const pending: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as unknown;
    if (!isMap(m) || typeof m['role'] !== 'string' || !ROLES.has(m['role'])) {
      return { message: `Invalid value for 'messages[${i}].role'.`, param: `messages.[${i}].role` };
    }
    const role = m['role'];
    if (role === 'tool') {
      const id = m['tool_call_id'];
      if (typeof id !== 'string' || !pending.includes(id)) {
        return {
          message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          param: `messages.[${i}].role`,
        };
      }
      if (typeof m['content'] !== 'string' && !Array.isArray(m['content'])) {
        return { message: `Invalid type for 'messages[${i}].content': expected a string.`, param: `messages.[${i}].content` };
      }
      // One answer per call: a server that reused an id within the batch gets one per copy.
      pending.splice(pending.indexOf(id), 1);
      continue;
    }
    if (pending.length > 0) {
      return {
        message:
          "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
          `The following tool_call_ids did not have response messages: ${pending.join(', ')}`,
        param: `messages.[${i}].role`,
      };
    }
    if (role === 'assistant' && Array.isArray(m['tool_calls'])) {
      for (let j = 0; j < m['tool_calls'].length; j++) {
        const call = m['tool_calls'][j] as unknown;
        if (!isMap(call) || typeof call['id'] !== 'string' || !isMap(call['function']) || typeof call['function']['arguments'] !== 'string') {
          return { message: `Invalid value for 'messages[${i}].tool_calls[${j}]'.`, param: `messages.[${i}].tool_calls.[${j}]` };
        }
        pending.push(call['id']);
      }
    } else if (role !== 'assistant' && m['content'] === undefined) {
      return { message: `Missing required parameter: 'messages[${i}].content'.`, param: `messages.[${i}].content` };
    }
  }
  if (pending.length > 0) {
    return {
      message:
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
        `The following tool_call_ids did not have response messages: ${pending.join(', ')}`,
      param: 'messages',
    };
  }
  return undefined;
}

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `response_format` as OpenAI checks it: `text`, `json_object`, or `json_schema` with a name and an object schema. */
function responseFormatProblem(format: unknown): { message: string; param: string } | undefined {
  if (format === undefined) return undefined;
  if (!isMap(format) || !['text', 'json_object', 'json_schema'].includes(format['type'] as string))
    return { message: "Invalid 'response_format.type': expected one of 'text', 'json_object', 'json_schema'.", param: 'response_format.type' };
  if (format['type'] !== 'json_schema') return undefined;
  const spec = format['json_schema'];
  if (!isMap(spec)) return { message: "Missing required parameter: 'response_format.json_schema'.", param: 'response_format.json_schema' };
  if (typeof spec['name'] !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(spec['name']))
    return {
      message: "Invalid 'response_format.json_schema.name': expected a string of letters, digits, '_' or '-', at most 64.",
      param: 'response_format.json_schema.name',
    };
  if (spec['schema'] !== undefined && !isMap(spec['schema']))
    return { message: "Invalid type for 'response_format.json_schema.schema': expected an object.", param: 'response_format.json_schema.schema' };
  return undefined;
}
