import { readFile } from 'node:fs/promises';
import { AgentRxError } from '../errors.js';
import { describeType, isPlainObject } from './plain-object.js';

/**
 * Reads a JSON config file into a plain object (a leading BOM is ignored). Rejects with
 * `invalid_config` naming the path when the file is missing, a directory or unreadable, when it
 * is not valid JSON (with the position, line and column of the first syntax error, and never the
 * source text, which may hold a secret), or when it holds anything but an object.
 */
export async function readConfigFile(path: string): Promise<object> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const why = code === 'ENOENT' ? 'not found' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${String(code ?? e)})`;
    throw new AgentRxError('invalid_config', `config file ${path} ${why}`, { path, code }, { cause: e });
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // V8's message quotes the source text, which may hold a secret: locate the error ourselves
    // and never attach the SyntaxError as cause.
    const { position, reason } = locateJsonError(text);
    const { line, column } = lineColumn(text, position);
    throw new AgentRxError('invalid_config', `config file ${path} is not valid JSON: ${reason} at position ${position} (line ${line} column ${column})`, {
      path,
      position,
      line,
      column,
    });
  }
  if (!isPlainObject(parsed)) {
    throw new AgentRxError('invalid_config', `config file ${path} must hold a JSON object, got ${describeType(parsed)}`, { path });
  }
  return parsed;
}

class JsonSyntaxError {
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {}
}

/** Position and reason of the first JSON syntax error in `text` (RFC 8259 grammar). */
function locateJsonError(text: string): { position: number; reason: string } {
  let i = 0;
  const fail = (reason: string): never => {
    throw new JsonSyntaxError(i, i >= text.length ? 'unexpected end of input' : reason);
  };
  const unexpected = (): never => fail(`unexpected ${JSON.stringify(text[i])}`);
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  };
  const string = (): void => {
    i++;
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text[i] as string;
      if (c === '"') return void i++;
      if (c === '\\') {
        const e = text[i + 1];
        if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else fail('bad escape in string');
        continue;
      }
      if (c.charCodeAt(0) < 0x20) fail('control character in string');
      i++;
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`expected a property name in double quotes, found ${JSON.stringify(text[i])}`);
        string();
        ws();
        if (text[i] !== ':') fail(`expected ':' after a property name, found ${JSON.stringify(text[i])}`);
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail(`expected ',' or '}' after a property value, found ${JSON.stringify(text[i])}`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail(`expected ',' or ']' after an array element, found ${JSON.stringify(text[i])}`);
      }
    }
    if (c === '"') return string();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) return void (i += word.length);
    }
    const num = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
    num.lastIndex = i;
    if (c !== undefined && /[-0-9]/.test(c) && num.test(text)) return void (i = num.lastIndex);
    unexpected();
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`unexpected ${JSON.stringify(text[i])} after the JSON value`);
  } catch (e) {
    if (e instanceof JsonSyntaxError) return { position: e.position, reason: e.reason };
    throw e;
  }
  return { position: 0, reason: 'invalid JSON' };
}

function lineColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  return { line, column: position - before.lastIndexOf('\n') };
}
