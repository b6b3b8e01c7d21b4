import { toToolOutcome } from '../../../src/plugins/mcp/mcp-result.js';

describe('toToolOutcome', () => {
  describe('when a result mixes text, image, audio, resources and an unknown block', () => {
    it('should keep the text and describe the rest, in order', () => {
      const png = Buffer.alloc(12 * 1024).toString('base64');
      const out = toToolOutcome(
        {
          content: [
            { type: 'text', text: 'Here:' },
            { type: 'image', mimeType: 'image/png', data: png },
            { type: 'audio', mimeType: 'audio/wav', data: 'AAAA' },
            { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' },
            { type: 'resource', resource: { uri: 'file:///b.txt', text: 'inline text' } },
            { type: 'resource', resource: { uri: 'file:///c.bin', mimeType: 'application/zip', blob: png } },
            { type: 'hologram' },
          ],
        },
        100_000,
      );
      expect(out).toEqual({
        content:
          'Here:\n\n[image: image/png, 12 KB]\n\n[audio: audio/wav, 1 KB]\n\n[resource: file:///a.txt (a.txt)]\n\ninline text\n\n[resource: file:///c.bin, application/zip, 12 KB]\n\n[hologram content]',
        isError: false,
      });
    });
  });

  describe('when only structured content is given', () => {
    it('should give its JSON text', () => {
      expect(toToolOutcome({ content: [], structuredContent: { a: [1, 2] } }, 1000)).toEqual({ content: '{"a":[1,2]}', isError: false });
    });
  });

  describe('when the server says isError', () => {
    it('should stay an error', () => {
      expect(toToolOutcome({ content: [{ type: 'text', text: 'nope' }], isError: true }, 1000)).toEqual({ content: 'nope', isError: true });
    });
  });

  describe('when the text is over the cap', () => {
    it('should cut it with a note', () => {
      const out = toToolOutcome({ content: [{ type: 'text', text: 'y'.repeat(1500) }] }, 1000);
      expect(out.content).toBe(
        `${'y'.repeat(1000)}\n[truncated: 500 more characters; the result is over the 1000-character cap (mcp.servers.<name>.maxResultChars)]`,
      );
    });
  });

  describe('when the result is a legacy toolResult', () => {
    it('should use it', () => {
      expect(toToolOutcome({ toolResult: { ok: 1 } }, 1000)).toEqual({ content: '{"ok":1}', isError: false });
    });
  });
});
