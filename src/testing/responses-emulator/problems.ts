/**
 * The 400 `invalid_request_error`s of the Responses emulator, worded as OpenAI words them
 * (`Missing required parameter: 'x'.`, `Invalid type for 'x': expected a string, but got an
 * integer instead.`…), each naming its `param` and `code`.
 */

type Json = Record<string, unknown>;

/** Why a request is refused: the `message`, `param` and `code` of OpenAI's error body. */
export interface RequestProblem {
  readonly message: string;
  readonly param: string | null;
  readonly code: string | null;
}

/** A problem with the message as given. */
export function problem(message: string, param: string | null, code: string | null = null): RequestProblem {
  return { message, param, code };
}

/** `Missing required parameter: '<param>'.` */
export function missing(param: string): RequestProblem {
  return problem(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
}

/** `Invalid type for '<param>': expected <expected>, but got <the type of value> instead.` */
export function invalidType(param: string, expected: string, value: unknown): RequestProblem {
  return problem(`Invalid type for '${param}': expected ${expected}, but got ${typeName(value)} instead.`, param, 'invalid_type');
}

/** `Invalid value: '<value>'. Supported values are: 'a', 'b', and 'c'.` */
export function invalidValue(param: string, value: unknown, supported: readonly string[]): RequestProblem {
  const quoted = supported.map((s) => `'${s}'`);
  const list = quoted.length <= 2 ? quoted.join(' and ') : `${quoted.slice(0, -1).join(', ')}, and ${quoted[quoted.length - 1]}`;
  return problem(`Invalid value: '${String(value)}'. Supported values are: ${list}.`, param, 'invalid_value');
}

/** `Invalid '<param>': empty array. Expected an array with minimum length 1, …` */
export function emptyArray(param: string): RequestProblem {
  return problem(`Invalid '${param}': empty array. Expected an array with minimum length 1, but got an empty array instead.`, param, 'empty_array');
}

/** `Invalid '<param>': string too short. Expected a string with minimum length 1, …` */
export function emptyString(param: string): RequestProblem {
  return problem(
    `Invalid '${param}': string too short. Expected a string with minimum length 1, but got an empty string instead.`,
    param,
    'string_below_min_length',
  );
}

/** A number outside `[min, max]`, as OpenAI words it (`decimal above maximum value…`); undefined when inside. */
export function outOfRange(param: string, value: number, min: number, max: number, integer: boolean): RequestProblem | undefined {
  const kind = integer ? 'integer' : 'decimal';
  if (value < min) {
    return problem(`Invalid '${param}': ${kind} below minimum value. Expected a value >= ${min}, but got ${value} instead.`, param, `${kind}_below_min_value`);
  }
  if (value > max) {
    return problem(`Invalid '${param}': ${kind} above maximum value. Expected a value <= ${max}, but got ${value} instead.`, param, `${kind}_above_max_value`);
  }
  return undefined;
}

/** How OpenAI names a JSON value's type in its messages: `an integer`, `a decimal`, `an object`… */
export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a decimal';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'boolean') return 'a boolean';
  return 'an object';
}

/** True for a JSON object (not null, not an array). */
export function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
