/**
 * A zod 3 schema (what `import 'zod'` finds when zod 4 is not installed and another package brought
 * zod 3) as a tool input: zod 3 implements Standard Schema but has no JSON Schema converter, so the
 * tool is refused at `defineTool` with a message naming the zod version that works.
 */
import { z as z3 } from 'zod-v3';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import { isAgentRxError } from '../../../src/core/errors.js';

describe('defineTool', () => {
  describe('when the input schema is a zod 3 object', () => {
    const define = (): unknown =>
      defineTool({ name: 'weather', description: 'Weather of a city.', inputSchema: z3.object({ city: z3.string() }), handle: () => 'sunny' });

    it('should refuse the tool with invalid_config, naming it, zod ≥ 4.2 and the JSON Schema way out', () => {
      let error: unknown;
      try {
        define();
      } catch (e) {
        error = e;
      }
      expect(isAgentRxError(error, 'invalid_config')).toBe(true);
      expect((error as Error).message).toMatch(/weather/);
      expect((error as Error).message).toMatch(/vendor 'zod'\) has no JSON Schema converter/);
      expect((error as Error).message).toMatch(/zod ≥ 4\.2/);
      expect((error as Error).message).toMatch(/inputSchema/);
    });
  });
});
