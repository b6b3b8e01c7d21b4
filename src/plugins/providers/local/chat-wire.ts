import { jsonText } from '../../../core/util/json-depth.js';

/** Wire helpers of the `local` provider shared by its chunk and completion readers. */

/** A wire map (string-keyed, verbatim JSON). */
export type WireMap = Record<string, unknown>;

/** The human-readable message of an OpenAI-style error body (`{error:{message}}`, `{error:"…"}`, `{message}`). */
export function errorText(body: unknown): string {
  if (typeof body === 'string') {
    try {
      return errorText(JSON.parse(body));
    } catch {
      return body;
    }
  }
  if (!isMap(body)) return '';
  const err = body['error'];
  if (typeof err === 'string') return err;
  if (isMap(err) && typeof err['message'] === 'string') return err['message'];
  if (typeof body['message'] === 'string') return body['message'];
  if (typeof body['detail'] === 'string') return body['detail'];
  return jsonText(body);
}

/** True for a plain JSON object (not null, not an array). */
export function isMap(v: unknown): v is WireMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `s`, cut to `max` characters with an ellipsis when longer. */
export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…`;
}
