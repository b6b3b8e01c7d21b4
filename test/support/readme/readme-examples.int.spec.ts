import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The README's examples are these files' `#region readme` parts, verbatim: the typecheck compiles
 * them (importing `agentrx` and `agentrx/testing` as a user does), this spec runs them against the
 * OpenAI emulator and checks that the README still shows each one as it is here.
 */
const here = dirname(fileURLToPath(import.meta.url));
const readme = readFileSync(join(here, '..', '..', '..', 'README.md'), 'utf8');

/** The `// #region readme` … `// #endregion readme` parts of an example file, joined by a blank line. */
function regionsOf(file: string): string {
  const text = readFileSync(join(here, file), 'utf8');
  const parts = [...text.matchAll(/\/\/ #region readme\n([\s\S]*?)\/\/ #endregion readme\n/g)].map((m) => (m[1] as string).trimEnd());
  expect(parts.length).toBeGreaterThan(0);
  return parts.join('\n\n');
}

describe('README examples', () => {
  describe.each(['consumer.example.ts', 'module.example.ts', 'testing.example.ts'])('%s', (file) => {
    it('should be shown in the README exactly as it compiles here', () => {
      expect(readme).toContain(`\`\`\`ts\n${regionsOf(file)}\n\`\`\``);
    });
  });

  describe('the EventConsumer example', () => {
    it('should see the tool call, the streamed text and one stop per session', async () => {
      const { audit } = await import('./consumer.example.js');
      expect(audit.calls).toEqual([expect.stringMatching(/: calculate \(call_e0_0\)$/)]);
      expect(audit.text).toBe('It is 42.');
      expect(audit.ended).toEqual([expect.stringMatching(/: completed$/)]);
    });
  });

  describe('the module example', () => {
    it('should bind the validated section and the tool, which uses it', async () => {
      const { result, toolMessage } = await import('./module.example.js');
      expect(toolMessage).toBe('Olá, Ana! Olá, Ana!');
      expect(result.text).toBe('Done.');
    });
  });

  describe('the scripted-emulator example', () => {
    it('should run the tool and answer as scripted', async () => {
      const { emulator, result } = await import('./testing.example.js');
      expect(result).toMatchObject({ text: 'Lisbon: 21 °C.', turns: 2 });
      expect(JSON.stringify(emulator.requests.at(-1)?.body)).toContain(JSON.stringify(JSON.stringify({ city: 'Lisbon', tempC: 21 })).slice(1, -1));
    });
  });
});
