import { ledgerEntryProblem, recordFieldsProblem } from '../record-shape.js';

/**
 * Why a journal line after the header that is valid JSON is not of a journal line's shape (see
 * `JournalLine`), naming what is wrong; undefined when its shape is right, or when it is not JSON
 * at all (that is for the scan to judge: a torn line, or a corrupt one). Envelope lines
 * (`{"e":{…`) are left to the fold, which checks their `seq`: they are most of a journal and are
 * not parsed twice. A record save's fields are checked against their types in `SessionRecord`.
 */
export function lineShapeProblem(text: string): string | undefined {
  if (text.startsWith('{"e":{')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'is JSON but not a journal line (an object with e, l or r)';
  const v = value as Record<string, unknown>;
  if ('e' in v)
    return typeof v['e'] === 'object' && v['e'] !== null && typeof (v['e'] as { seq?: unknown }).seq === 'number' ? undefined : 'is an envelope without a seq';
  if ('l' in v) {
    const wrong = ledgerEntryProblem(v['l']);
    if (wrong) return `is a ledger transition whose entry ${wrong}`;
    return typeof v['at'] === 'number' && Number.isFinite(v['at']) ? undefined : 'is a ledger transition without a time (at)';
  }
  if (!('r' in v)) return 'is JSON but not a journal line (an object with e, l or r)';
  return saveProblem(v);
}

/** Why a record save line (`r`, with `d`, `L`, `x`, `tx`) is not of its shape, or undefined. */
function saveProblem(v: Record<string, unknown>): string | undefined {
  const r = v['r'];
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return 'is a record save whose r is not an object';
  const fields = recordFieldsProblem(r as Record<string, unknown>);
  if (fields) return `is a record save whose ${fields}`;
  const d = v['d'];
  if (d !== undefined && (!Array.isArray(d) || d.some((k) => typeof k !== 'string'))) return 'is a record save whose d is not a list of field names';
  const ledger = v['L'];
  if (ledger !== undefined) {
    if (!Array.isArray(ledger)) return 'is a record save whose ledger (L) is not an array';
    for (const [i, entry] of ledger.entries()) {
      const wrong = ledgerEntryProblem(entry);
      if (wrong) return `is a record save whose ledger entry ${i + 1}: ${wrong}`;
    }
  }
  const x = v['x'];
  if (x !== undefined && !(typeof x === 'number' && Number.isInteger(x) && x >= 0)) return 'is a record save whose transcript offset (x) is not a whole number';
  const tx = v['tx'];
  if (tx !== undefined && !Array.isArray(tx)) return 'is a record save whose transcript items (tx) are not an array';
  return undefined;
}
