import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackBody } from '../../support/loopback-body.js';
import { readBodyText } from '../../../src/core/http/read-body-text.js';

describe('readBodyText', () => {
  const loopback = new LoopbackBody();
  afterEach(() => loopback.close());

  /** Serves `handler` as a 500 JSON response and returns its body. */
  const body = (handler: (res: ServerResponse) => void): Promise<IncomingMessage> => loopback.body(handler, { status: 500, contentType: 'application/json' });

  describe('when the body is longer than maxChars', () => {
    it('should resolve with its first maxChars characters, a split UTF-8 character kept whole', async () => {
      const text = '✓'.repeat(40);
      const bytes = Buffer.from(text, 'utf8');
      const res = await body((r) => {
        r.write(bytes.subarray(0, 4));
        r.end(bytes.subarray(4));
      });
      await expect(readBodyText(res, 10)).resolves.toBe('✓'.repeat(10));
    });
  });

  describe('when the body breaks before its end', () => {
    it('should resolve with the text that arrived', async () => {
      const res = await body((r) => void r.write('{"error":', () => r.destroy()));
      await expect(readBodyText(res)).resolves.toBe('{"error":');
    });
  });

  describe('when the body is silent longer than timeoutMs', () => {
    it('should destroy it and resolve with the text that arrived', async () => {
      const res = await body((r) => void r.write('partial'));
      await expect(readBodyText(res, 100, 50)).resolves.toBe('partial');
      expect(res.destroyed).toBe(true);
    });
  });
});
