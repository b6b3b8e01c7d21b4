import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/*
 * What `agentrx --help` and `--version` load (issue 28, "load only what is used"): the CLI's
 * entry reaches, through its static imports, only commander and the commands' declarations; a
 * command's code (`*.action.ts`) and the engine (rxjs, inversify, class-validator, axios, …) load
 * when that command runs.
 */

const SRC = join(process.cwd(), 'src');

/** The modules a file imports at load time: value imports and re-exports, not `import type` nor `import()`. */
function staticImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
  const out: string[] = [];
  for (const node of source.statements) {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) out.push((node.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly) {
      out.push((node.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return out;
}

/** Every source file and package `entry` reaches through static imports. */
function reach(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of staticImports(file)) {
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
        expect(existsSync(target)).toBe(true);
        visit(target);
      } else if (!spec.startsWith('node:')) {
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
      }
    }
  };
  visit(join(SRC, entry));
  return { files, packages };
}

describe('what the agentrx CLI loads before a command runs', () => {
  // The entry answers `--version` itself; it imports cli.ts (commander, the declarations) for the rest.
  it('should reach no package from its entry (agentrx --version)', () => {
    const entry = reach('cli/main.ts');
    expect([...entry.packages]).toEqual([]);
    expect([...entry.files].map((f) => relative(SRC, f)).sort()).toEqual(['cli/main.ts', 'cli/version.ts']);
  });

  const { files, packages } = reach('cli/cli.ts');

  it('should reach no package but commander', () => {
    expect([...packages]).toEqual(['commander']);
  });

  it('should reach no command code and nothing of the engine', () => {
    const reached = [...files].map((f) => relative(SRC, f));
    expect(reached).toContain('cli/commands/run.ts');
    expect(reached.filter((f) => f.endsWith('.action.ts') || f === 'agentrx.ts' || f.startsWith('core/session/'))).toEqual([]);
  });
});
