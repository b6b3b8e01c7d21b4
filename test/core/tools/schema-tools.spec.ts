import { z } from 'zod';
import { isAgentRxError } from '../../../src/core/errors.js';
import type { StandardSchemaV1, ToolContext } from '../../../src/core/plugin/tool-handler.js';
import { defineTool } from '../../../src/core/tools/define-tool.js';
import { ToolDispatcher, type DispatchOptions } from '../../../src/core/tools/tool-dispatcher.js';
import { ToolLedger } from '../../../src/core/tools/tool-ledger.js';
import { declarationOf } from '../../../src/core/tools/tool-schema.js';
import { compileToolInput } from '../../../src/core/tools/tool-input.js';

function options(extra: Partial<DispatchOptions> = {}): DispatchOptions {
  return {
    sessionId: 's',
    signal: new AbortController().signal,
    toolTimeoutMs: 10_000,
    concurrency: 1,
    ledger: new ToolLedger(),
    persist: async () => undefined,
    ...extra,
  };
}

/** An input nested `depth` objects deep under `q`. */
function deep(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) v = { n: v };
  return { q: 'x', extra: v };
}

const searchSchema = {
  type: 'object',
  properties: { q: { type: 'string', minLength: 1 }, limit: { type: 'integer', minimum: 1, maximum: 50 } },
  required: ['q'],
} as const;

function jsonTool(schema: Record<string, unknown> = searchSchema) {
  const calls: unknown[] = [];
  const tool = defineTool({
    name: 'search',
    description: 'Searches.',
    inputSchema: schema,
    handle: (input: Record<string, unknown>) => {
      calls.push(input);
      return `found ${String(input.q)}`;
    },
  });
  return { tool, calls };
}

function zodTool(schema: z.ZodType = z.object({ city: z.string().min(2), days: z.number().int().positive().optional() })) {
  const calls: unknown[] = [];
  const tool = defineTool({
    name: 'forecast',
    description: 'Forecast for a city.',
    inputSchema: schema as unknown as StandardSchemaV1,
    handle: (input: unknown) => {
      calls.push(input);
      return { ok: true };
    },
  });
  return { tool, calls };
}

const run = (tool: ReturnType<typeof defineTool>, input: Record<string, unknown>) =>
  new ToolDispatcher([tool]).dispatch([{ id: 't1', name: tool.name, input }], options());

describe('schema-defined tools', () => {
  describe('with a JSON Schema input', () => {
    describe('when a pattern backtracks catastrophically on a crafted input', () => {
      it('should judge it in linear time (the call returns, the tool does not run); a 40-character input would take a backtracking engine hours', async () => {
        const { tool, calls } = jsonTool({ type: 'object', properties: { q: { type: 'string', pattern: '^(a+)+$' } }, required: ['q'] });
        const [bad] = await run(tool, { q: `${'a'.repeat(40)}!` });
        expect(bad).toMatchObject({ isError: true, content: expect.stringContaining('q: must match pattern "^(a+)+$"') });
        const [good] = await run(tool, { q: 'aaaa' });
        expect(good).toMatchObject({ isError: false, content: 'found aaaa' });
        expect(calls).toEqual([{ q: 'aaaa' }]);
      });

      it('should still apply a pattern the linear engine does not support (a lookahead)', async () => {
        const { tool } = jsonTool({ type: 'object', properties: { q: { type: 'string', pattern: '^(?=.*[0-9])[a-z0-9]+$' } }, required: ['q'] });
        expect((await run(tool, { q: 'abc' }))[0]).toMatchObject({ isError: true });
        expect((await run(tool, { q: 'abc1' }))[0]).toMatchObject({ isError: false });
      });
    });

    describe('when the input is nested deeper than the depth guard', () => {
      it('should answer is_error before the validator runs, and not run the handler', async () => {
        const { tool, calls } = jsonTool({ type: 'object', properties: { q: { type: 'string' }, extra: {} } });
        const [r] = await run(tool, deep(5_000));
        expect(r!.isError).toBe(true);
        expect(r!.content).toMatch(/nested deeper than 64 levels/);
        expect(calls).toHaveLength(0);
      });
    });

    describe('when the input is invalid', () => {
      it('should answer is_error naming every bad field and not run the handler', async () => {
        const { tool, calls } = jsonTool();
        const [r] = await run(tool, { limit: 500 });
        expect(r!.isError).toBe(true);
        expect(r!.content).toBe("invalid input for tool 'search': q: is required; limit: must be <= 50");
        expect(calls).toHaveLength(0);
      });
    });

    describe('when the input has a field the schema does not list (and the schema says nothing of extra fields)', () => {
      it('should refuse it like a DTO does, naming it', async () => {
        const { tool, calls } = jsonTool();
        const [r] = await run(tool, { q: 'cats', sort: 'asc' });
        expect(r!.isError).toBe(true);
        expect(r!.content).toContain('sort: is not allowed (unknown field)');
        expect(calls).toHaveLength(0);
      });
    });

    describe('when the schema allows extra fields itself', () => {
      it('should take it as written', async () => {
        const { tool, calls } = jsonTool({ ...searchSchema, additionalProperties: true });
        const [r] = await run(tool, { q: 'cats', sort: 'asc' });
        expect(r).toMatchObject({ isError: false, content: 'found cats' });
        expect(calls).toEqual([{ q: 'cats', sort: 'asc' }]);
      });
    });

    describe('when the input is valid', () => {
      it('should run the handler with the input and send the host the closed schema', async () => {
        const { tool, calls } = jsonTool();
        const [r] = await run(tool, { q: 'cats', limit: 3 });
        expect(r).toMatchObject({ isError: false, content: 'found cats' });
        expect(calls).toEqual([{ q: 'cats', limit: 3 }]);
        expect(declarationOf(tool)).toEqual({ name: 'search', description: 'Searches.', inputSchema: { ...searchSchema, additionalProperties: false } });
      });
    });

    describe('when the schema is a 2020-12 schema with $defs', () => {
      it('should validate nested fields with the matching dialect and name them by path', async () => {
        const { tool } = jsonTool({
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          properties: { q: { type: 'string' }, where: { $ref: '#/$defs/place' } },
          $defs: { place: { type: 'object', properties: { lat: { type: 'number' } }, required: ['lat'] } },
        });
        const [r] = await run(tool, { q: 'x', where: { lat: 'north' } });
        expect(r!.content).toBe("invalid input for tool 'search': where.lat: must be number");
        expect(declarationOf(tool).inputSchema).not.toHaveProperty('$schema');
      });
    });

    describe('when the schema itself is invalid', () => {
      it('should refuse the tool at registration with invalid_config naming it', () => {
        let err: unknown;
        try {
          jsonTool({ type: 'object', properties: { q: { type: 'strin' } } });
        } catch (e) {
          err = e;
        }
        expect(isAgentRxError(err, 'invalid_config')).toBe(true);
        expect((err as Error).message).toMatch(/^tool 'search': invalid input JSON Schema/);
      });
    });

    describe('when the schema does not describe an object', () => {
      it('should refuse the tool at registration', () => {
        expect(() => jsonTool({ type: 'string' })).toThrow(/must describe an object/);
      });
    });
  });

  describe('with a zod (Standard Schema) input', () => {
    describe('when the input is nested deeper than the depth guard', () => {
      it('should answer is_error and not run the handler', async () => {
        const { tool, calls } = zodTool(z.object({ q: z.string(), extra: z.any() }));
        const [r] = await run(tool, deep(5_000));
        expect(r!.content).toMatch(/nested deeper than 64 levels/);
        expect(calls).toHaveLength(0);
      });
    });

    describe('when the input is invalid', () => {
      it('should answer is_error naming every bad field and not run the handler', async () => {
        const { tool, calls } = zodTool();
        const [r] = await run(tool, { city: 'X', days: 1.5 });
        expect(r!.isError).toBe(true);
        expect(r!.content).toMatch(/^invalid input for tool 'forecast': city: .+; days: .+/);
        expect(calls).toHaveLength(0);
      });
    });

    describe('when the input has an unknown field', () => {
      it('should follow the schema: z.object strips it, z.strictObject refuses it', async () => {
        const loose = zodTool();
        const [a] = await run(loose.tool, { city: 'Oslo', sort: 1 });
        expect(a!.isError).toBe(false);
        expect(loose.calls).toEqual([{ city: 'Oslo' }]);

        const strict = zodTool(z.strictObject({ city: z.string() }));
        const [b] = await run(strict.tool, { city: 'Oslo', sort: 1 });
        expect(b!.isError).toBe(true);
        expect(b!.content).toMatch(/sort/);
        expect(strict.calls).toHaveLength(0);
      });
    });

    describe('when the input is valid', () => {
      it("should run the handler with the validator's output and send the host zod's own JSON Schema", async () => {
        const { tool, calls } = zodTool(z.object({ city: z.string(), days: z.number().default(3) }));
        const [r] = await run(tool, { city: 'Oslo' });
        expect(r).toMatchObject({ isError: false, content: '{"ok":true}' });
        expect(calls).toEqual([{ city: 'Oslo', days: 3 }]);
        const schema = declarationOf(tool).inputSchema as Record<string, unknown>;
        expect(schema.type).toBe('object');
        expect(schema.properties).toEqual({ city: { type: 'string' }, days: { type: 'number', default: 3 } });
        expect(schema).not.toHaveProperty('$schema');
      });
    });

    describe('when a Standard Schema has no JSON Schema converter', () => {
      it('should refuse the tool at registration, saying why', () => {
        const bare: StandardSchemaV1 = { '~standard': { version: 1, vendor: 'bare', validate: (v) => ({ value: v }) } };
        expect(() => defineTool({ name: 'bare', description: '', inputSchema: bare, handle: () => 'x' })).toThrow(
          /vendor 'bare'\) has no JSON Schema converter/,
        );
      });
    });

    describe('when the validator never settles', () => {
      const hanging = (): StandardSchemaV1 => ({
        '~standard': { version: 1, vendor: 'x', validate: () => new Promise<never>(() => undefined), jsonSchema: { input: () => ({ type: 'object' }) } },
      });

      it("should answer is_error once the tool's time limit passes, not running the handler", async () => {
        const calls: unknown[] = [];
        const tool = defineTool({
          name: 'x',
          description: '',
          inputSchema: hanging(),
          timeoutMs: 50,
          handle: (i: unknown) => {
            calls.push(i);
            return 'ran';
          },
        });
        const [r] = await run(tool, {});
        expect(r).toMatchObject({ isError: true, content: "validating the input of tool 'x' did not finish within 50 ms; it did not run" });
        expect(calls).toHaveLength(0);
      });

      it('should end the dispatch with cancelled as soon as the session is cancelled', async () => {
        const tool = defineTool({ name: 'x', description: '', inputSchema: hanging(), handle: () => 'ran' });
        const ctrl = new AbortController();
        const pending = new ToolDispatcher([tool]).dispatch([{ id: 't1', name: 'x', input: {} }], options({ signal: ctrl.signal, toolTimeoutMs: 600_000 }));
        ctrl.abort(new Error('stop'));
        await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
      });
    });

    describe('when the validator itself throws', () => {
      it('should answer is_error and not run the handler', async () => {
        const calls: unknown[] = [];
        const throwing: StandardSchemaV1 = {
          '~standard': {
            version: 1,
            vendor: 'x',
            validate: () => {
              throw new Error('validator broke');
            },
            jsonSchema: { input: () => ({ type: 'object' }) },
          },
        };
        const tool = defineTool({
          name: 'x',
          description: '',
          inputSchema: throwing,
          handle: (i: unknown) => {
            calls.push(i);
            return 'ran';
          },
        });
        const [r] = await run(tool, {});
        expect(r).toMatchObject({ isError: true, content: "invalid input for tool 'x': validator broke" });
        expect(calls).toHaveLength(0);
      });
    });
  });

  describe('defineTool', () => {
    describe('when the definition is malformed', () => {
      it('should throw invalid_config listing every problem', () => {
        let err: unknown;
        try {
          defineTool({ name: 'bad name!', description: 3, inputSchema: 'x', handle: undefined, timeoutMs: -1 } as never);
        } catch (e) {
          err = e;
        }
        expect(isAgentRxError(err, 'invalid_config')).toBe(true);
        const m = (err as Error).message;
        for (const part of [
          'name must match',
          'description must be a string',
          'handle must be a function',
          'timeoutMs must be a positive integer',
          'inputSchema must be',
        ])
          expect(m).toContain(part);
      });
    });

    describe('when called with a full definition', () => {
      it('should return a frozen handler that passes the context and keeps its options', async () => {
        let seen: ToolContext | undefined;
        const tool = defineTool({
          name: 'ctx',
          description: 'd',
          inputSchema: { type: 'object' },
          idempotent: true,
          timeoutMs: 500,
          requireApproval: true,
          handle: (_i, ctx) => {
            seen = ctx;
            return 'ok';
          },
        });
        expect(Object.isFrozen(tool)).toBe(true);
        expect(tool).toMatchObject({ idempotent: true, timeoutMs: 500, requireApproval: true });
        expect(compileToolInput(tool).kind).toBe('json-schema');
        expect(new ToolDispatcher([tool]).requiresApproval('ctx')).toBe(true);
        const [r] = await run(tool, {});
        expect(r!.content).toBe('ok');
        expect(seen?.toolUseId).toBe('t1');
      });
    });

    describe('when a handler declares both inputType and inputSchema', () => {
      it('should be refused', () => {
        class Dto {}
        expect(() => compileToolInput({ name: 'both', description: '', inputType: Dto, inputSchema: { type: 'object' }, handle: () => '' })).toThrow(
          /both inputType and inputSchema/,
        );
      });
    });
  });
});
