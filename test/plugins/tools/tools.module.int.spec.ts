import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { Container } from '../../../src/core/util/inversify.js';
import { ToolHandler, type ToolContext } from '../../../src/core/plugin/tool-handler.js';
import { inputSchemaOf } from '../../../src/core/tools/tool-schema.js';
import {
  CalculateInput,
  CalculateToolHandler,
  Clock,
  demoToolsModule,
  GetTimeInput,
  GetTimeToolHandler,
  ReadFileInput,
  ReadFileOptions,
  ReadFileToolHandler,
  systemClock,
} from '../../../src/plugins/tools/index.js';
import { tempDir } from '../../support/temp-dir.js';

function contextWith(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { toolUseId: 'toolu_1', sessionId: 'sess_1', idempotencyKey: 'sess_1:toolu_1', signal, deadline: Date.now() + 60_000 };
}

describe('demoToolsModule', () => {
  describe('.load', () => {
    describe('when loaded into an empty container', () => {
      let container: Container;
      let tools: ToolHandler[];

      beforeEach(() => {
        container = new Container();
        container.load(demoToolsModule);
        tools = container.getAll<ToolHandler>(ToolHandler);
      });

      it('should bind the three tools under ToolHandler with unique, valid names', () => {
        const names = tools.map((t) => t.name);
        expect([...names].sort()).toEqual(['calculate', 'get_time', 'read_file']);
        expect(new Set(names).size).toBe(names.length);
        for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      });

      it('should give each tool its input DTO', () => {
        const inputTypes = Object.fromEntries(tools.map((t) => [t.name, t.inputType]));
        expect(inputTypes).toEqual({ calculate: CalculateInput, get_time: GetTimeInput, read_file: ReadFileInput });
      });

      it('should share one instance per tool between its class and the ToolHandler token', () => {
        expect(tools).toContain(container.get(GetTimeToolHandler));
        expect(tools).toContain(container.get(CalculateToolHandler));
        expect(tools).toContain(container.get(ReadFileToolHandler));
        expect(container.getAll<ToolHandler>(ToolHandler)).toEqual(tools);
      });

      it('should bind the system clock and the working directory as defaults', () => {
        expect(container.get(Clock)).toBe(systemClock);
        expect(container.get(ReadFileOptions)).toEqual({ root: process.cwd() });
      });

      it('should describe every tool and produce an object input schema from its DTO', () => {
        const schemas = Object.fromEntries(tools.map((t) => [t.name, inputSchemaOf(t)]));
        expect(Object.keys(schemas.calculate!.properties as object)).toEqual(['expression']);
        expect(schemas.calculate!.required).toEqual(['expression']);
        expect(Object.keys(schemas.get_time!.properties as object)).toEqual(['timeZone']);
        expect(schemas.get_time!.required).toBeUndefined();
        expect(Object.keys(schemas.read_file!.properties as object)).toEqual(['path']);
        for (const tool of tools) expect(tool.description.length).toBeGreaterThan(20);
      });

      it('should run calculate through the container', () => {
        expect(container.get(CalculateToolHandler).handle({ expression: '6 * 7' }, contextWith())).toBe('6 * 7 = 42');
      });
    });

    describe('when loaded into a container that already binds Clock and ReadFileOptions', () => {
      let tmp: string;
      let container: Container;

      beforeEach(async () => {
        tmp = await tempDir('agentrx-tools-module-');
        await fs.writeFile(path.join(tmp, 'note.txt'), 'from the bound root');
        container = new Container();
        container.bind<Clock>(Clock).toConstantValue({ now: () => new Date('2030-01-02T03:04:05.006Z') });
        container.bind<ReadFileOptions>(ReadFileOptions).toConstantValue({ root: tmp, maxBytes: 1024 });
        container.load(demoToolsModule);
      });

      it('should keep the bound clock', () => {
        expect(container.get(GetTimeToolHandler).handle({ timeZone: 'UTC' }, contextWith()).iso).toBe('2030-01-02T03:04:05.006+00:00');
      });

      it('should keep the bound read_file options', async () => {
        await expect(container.get(ReadFileToolHandler).handle({ path: 'note.txt' }, contextWith())).resolves.toBe('from the bound root');
      });

      it('should not add a second binding for either token', () => {
        expect(container.getAll(Clock)).toHaveLength(1);
        expect(container.getAll(ReadFileOptions)).toHaveLength(1);
      });
    });
  });
});
