// esbuild's `keepNames` pins each function's and class's name with a helper call,
// `__name(fn, "name")` (an Object.defineProperty of `name`), so that minified identifiers do not
// change what `constructor.name`, messages and stack traces read. That is right once, at a
// module's top level. Inside a function, the call runs each time the enclosing function does, and
// redefining `name` turns the new closure's properties into a dictionary (~250 bytes each): about
// 250 calls and 12 KB of live heap per Local session, for names only a stack trace would show.
// This finds those calls and unwraps them (`__name(() => …, "x")` becomes `(() => …)`): closures
// made inside functions (arrows, function expressions, functions declared in a function) keep
// their minified names; classes (also those made inside functions) and top-level functions keep
// theirs.
import MagicString from 'magic-string';

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);
/** The first arguments unwrapped: a closure made where the call is, or a choice between closures. */
const CLOSURES = new Set(['ArrowFunctionExpression', 'FunctionExpression', 'ConditionalExpression']);

/** `(a, b) => D(a, "name", { value: b, configurable: true })`: the shape of esbuild's helper. */
function isNameHelper(init) {
  if (init?.type !== 'ArrowFunctionExpression' || init.params.length !== 2) return false;
  const [target, value] = init.params.map((p) => p.name);
  const call = init.body;
  if (call?.type !== 'CallExpression' || call.arguments.length !== 3) return false;
  const [a, key, desc] = call.arguments;
  return (
    a.type === 'Identifier' &&
    a.name === target &&
    key.type === 'Literal' &&
    key.value === 'name' &&
    desc.type === 'ObjectExpression' &&
    desc.properties.some((p) => p.key?.name === 'value' && p.value?.type === 'Identifier' && p.value.name === value)
  );
}

/**
 * Where a module (esbuild's output, parsed) defines the helper: its local name and the names it is
 * exported as; undefined when it does not.
 */
export function nameHelperDefinition(ast) {
  let local;
  for (const s of ast.body) {
    if (s.type !== 'VariableDeclaration') continue;
    for (const d of s.declarations) if (d.id.type === 'Identifier' && isNameHelper(d.init)) local = d.id.name;
  }
  if (local === undefined) return undefined;
  const exported = [];
  for (const s of ast.body) {
    if (s.type !== 'ExportNamedDeclaration' || s.source) continue;
    for (const sp of s.specifiers) if (sp.local.name === local) exported.push(sp.exported.name ?? sp.exported.value);
  }
  return { local, exported };
}

/** The local names under which a module imports the helper (`fromHelper(source)` says whether an import's source is the helper's module). */
export function nameHelperImports(ast, fromHelper, exported) {
  const names = [];
  for (const s of ast.body) {
    if (s.type !== 'ImportDeclaration' || !fromHelper(s.source.value)) continue;
    for (const sp of s.specifiers) if (sp.type === 'ImportSpecifier' && exported.includes(sp.imported.name ?? sp.imported.value)) names.push(sp.local.name);
  }
  return names;
}

/**
 * The helper calls (named by `helpers`) that run inside a function (or an instance field's
 * initializer) and name a closure made there: a function or arrow expression (or a choice between
 * them), or a function declared in that same function.
 */
export function closureNameCalls(ast, helpers) {
  const found = [];
  const visit = (node, declared) => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node) visit(n, declared);
      return;
    }
    if (typeof node.type !== 'string') return;
    if (
      declared !== undefined &&
      node.type === 'CallExpression' &&
      node.callee.type === 'Identifier' &&
      helpers.includes(node.callee.name) &&
      node.arguments.length === 2
    ) {
      const fn = node.arguments[0];
      if (CLOSURES.has(fn.type) || (fn.type === 'Identifier' && declared.has(fn.name))) found.push(node);
    }
    // An instance field's initializer runs for each instance, as a function body does.
    const inner = FUNCTIONS.has(node.type) ? functionsDeclaredIn(node.body) : node.type === 'PropertyDefinition' && !node.static ? new Set() : declared;
    for (const key of Object.keys(node)) if (key !== 'type' && key !== 'start' && key !== 'end') visit(node[key], inner);
  };
  visit(ast, undefined);
  return found;
}

/** The names of the functions declared in a function's body (not in the functions within it). */
function functionsDeclaredIn(body) {
  const names = new Set();
  const visit = (node) => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    if (node.type === 'FunctionDeclaration') {
      names.add(node.id.name);
      return;
    }
    if (FUNCTIONS.has(node.type)) return;
    for (const key of Object.keys(node)) if (key !== 'type' && key !== 'start' && key !== 'end') visit(node[key]);
  };
  visit(body);
  return names;
}

/** `code` with those calls unwrapped, and its source map (null when there is none). */
export function unnameClosures(code, ast, helpers, id) {
  const calls = closureNameCalls(ast, helpers);
  if (calls.length === 0) return null;
  const s = new MagicString(code);
  for (const c of calls) {
    const fn = c.arguments[0];
    s.overwrite(c.start, fn.start, '(');
    s.overwrite(fn.end, c.end, ')');
  }
  return { code: s.toString(), map: s.generateMap({ hires: true, source: id }) };
}
