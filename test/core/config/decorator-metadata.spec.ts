import { Type } from 'class-transformer';
import { IsString, ValidateNested } from 'class-validator';
import { AgentRx } from '../../../src/agentrx.js';
import { checkDecoratorMetadata } from '../../../src/core/config/decorator-metadata.js';
import { injectable } from '../../../src/core/util/inversify.js';
import { AgentRxError } from '../../../src/core/errors.js';
import type { ToolHandler } from '../../../src/core/plugin/tool-handler.js';
import { inputSchemaOf } from '../../../src/core/tools/tool-schema.js';

// Built as `tsc` builds them with "emitDecoratorMetadata": true (this project's setting).
class Address {
  @IsString()
  city!: string;
}
class OrderInput {
  @ValidateNested()
  @Type(() => Address)
  address!: Address;
}

// Built as a compiler without "emitDecoratorMetadata" does: the same rules, no design:type.
class BareAddress {}
IsString()(BareAddress.prototype, 'city');
class BareOrderInput {}
ValidateNested()(BareOrderInput.prototype, 'address');

// Plain JavaScript's way: scalar rules applied by hand (their type is in the rule itself).
class HandWrittenInput {}
IsString()(HandWrittenInput.prototype, 'text');

function toolWith(inputType: new () => object): new () => ToolHandler {
  @injectable()
  class OrderTool implements ToolHandler {
    readonly name = 'order';
    readonly description = 'Places an order.';
    readonly inputType = inputType;
    handle(): string {
      return 'ok';
    }
  }
  return OrderTool;
}

async function createWith(inputType: new () => object): Promise<AgentRx> {
  return AgentRx.create({ tools: [toolWith(inputType)], config: { logLevel: 'silent', consumers: { terminal: false } } });
}

describe('checkDecoratorMetadata', () => {
  describe('when a nested input property has no design:type (emitDecoratorMetadata off)', () => {
    it('should be what breaks: the model would get an empty schema for it', () => {
      expect((inputSchemaOf({ inputType: BareOrderInput } as ToolHandler).properties as Record<string, unknown>)['address']).toEqual({});
      expect((inputSchemaOf({ inputType: OrderInput } as ToolHandler).properties as Record<string, unknown>)['address']).toEqual({
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
      });
    });

    it('should fail AgentRx.create with invalid_config naming the tool, the class, the property and both tsconfig flags', async () => {
      const error = await createWith(BareOrderInput).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AgentRxError);
      expect(error).toMatchObject({ code: 'invalid_config', details: { owner: "tool 'order'", inputType: 'BareOrderInput', properties: ['address'] } });
      const message = (error as AgentRxError).message;
      expect(message).toContain(
        "tool 'order': its input class BareOrderInput has class-validator decorators but no TypeScript type metadata (design:type) on address",
      );
      expect(message).toContain('"experimentalDecorators": true');
      expect(message).toContain('"emitDecoratorMetadata": true');
      expect(message).toContain("import 'reflect-metadata'");
    });
  });

  describe('when reflect-metadata is not loaded', () => {
    it('should throw invalid_config saying so and how to fix it', () => {
      const reflect = Reflect as unknown as Record<string, unknown>;
      const getMetadata = reflect['getMetadata'];
      delete reflect['getMetadata'];
      try {
        expect(() => checkDecoratorMetadata(OrderInput, "tool 'order'")).toThrow(
          expect.objectContaining({
            code: 'invalid_config',
            message: expect.stringContaining('Reflect.getMetadata is missing (reflect-metadata is not loaded)'),
          }),
        );
      } finally {
        reflect['getMetadata'] = getMetadata;
      }
    });
  });

  describe('when the input class was compiled with decorator metadata', () => {
    it('should pass, and AgentRx.create should declare the nested schema', async () => {
      expect(() => checkDecoratorMetadata(OrderInput, "tool 'order'")).not.toThrow();
      const rx = await createWith(OrderInput);
      try {
        expect(rx.tools.find((t) => t.name === 'order')?.inputSchema).toMatchObject({
          properties: { address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
        });
      } finally {
        await rx.stop();
      }
    });
  });

  describe('when a plain-JavaScript input class has only scalar rules applied by hand', () => {
    it('should pass: nothing depends on design:type there', async () => {
      expect(() => checkDecoratorMetadata(HandWrittenInput, "tool 'order'")).not.toThrow();
      const rx = await createWith(HandWrittenInput);
      await rx.stop();
      expect(rx.pluginIds.tools).toContain('order');
    });
  });

  describe('when the input class has no decorated property at all', () => {
    it('should pass', () => {
      class Empty {}
      expect(() => checkDecoratorMetadata(Empty, "tool 'order'")).not.toThrow();
      expect(() => checkDecoratorMetadata(BareAddress, "tool 'order'")).not.toThrow();
    });
  });
});
