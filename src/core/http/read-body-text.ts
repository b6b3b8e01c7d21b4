import type { Readable } from 'node:stream';

/**
 * Reads a whole (small) response body as UTF-8 text, up to `maxChars` (the rest is read and
 * discarded). Never rejects: a body that breaks or closes early resolves with what arrived, and
 * one silent for `timeoutMs` is destroyed and resolves the same way. For error bodies and
 * non-streamed answers, where some text beats none.
 */
export function readBodyText(body: Readable, maxChars = 65_536, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      resolve(text.slice(0, maxChars));
    };
    const arm = (): void => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        body.destroy();
        done();
      }, timeoutMs);
    };
    body.setEncoding('utf8');
    body.on('data', (s: string) => {
      arm();
      if (text.length < maxChars) text += s;
    });
    body.on('end', done);
    body.on('error', done);
    body.on('close', done);
    arm();
  });
}
