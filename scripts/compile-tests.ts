/**
 * For a whole `npm test`: the test files, and the TypeScript they import, compiled to JavaScript so
 * that node runs them without tsx. Under tsx every module a test process loads goes through its
 * hooks, and loading the gateway that way costs about 1.5 CPU-s more per file than loading it
 * compiled; over some seventy files that is more than a minute of CPU.
 *
 * Each file is compiled beside its source, as `.NAME.js` (`test/payouts/create-hold-and-settle.test.ts` →
 * `test/payouts/.create-hold-and-settle.test.js`), so that a path a test finds relative to its own file (a vector, the
 * repository's root) is the same compiled or not. What a file imports from `src/` is imported from
 * `dist/` instead, which `npm test` has just built, and which the `paygate` processes the tests
 * start run too. Types are not checked here (`npm run typecheck` does). A file is compiled again
 * only when its source (or this compiler) is newer than its output, and an output whose source is
 * gone is removed. Only relative specifiers naming an existing .ts file are rewritten, wherever
 * they appear: a test that needs a TypeScript file's path at run time builds it from ROOT.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.ESNext,
  target: ts.ScriptTarget.ES2022,
  verbatimModuleSyntax: true,
  inlineSourceMap: true,
};

/** When this compiler last changed: an output older than it is compiled again. */
const COMPILER_CHANGED = statSync(fileURLToPath(import.meta.url)).mtimeMs;

/** How every compiled file starts (on its first line, so that lines keep their numbers): what `removeStale` removes. */
const MARK = '/* compiled by scripts/compile-tests.ts from ';

/**
 * A relative specifier of a module, in the quotes it was written in: a TypeScript file, by its own
 * name or (as the SDK's sources name theirs) by the name it is compiled to.
 */
const SPECIFIER = /(['"])(\.\.?\/[^'"\n]+\.[jt]s)\1/g;

/** The TypeScript file `spec` names from `file`'s directory, or null. */
function sourceOf(file: string, spec: string): string | null {
  const target = path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts'));
  return existsSync(target) ? target : null;
}

/** Where `file` (a .ts path) is compiled to. */
export function compiledPath(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file, '.ts')}.js`);
}

/**
 * Compiles `files` (absolute .ts paths) and every TypeScript file outside `root/src` they import,
 * recursively; returns the compiled paths of `files`, in their order.
 */
export function compileTests(root: string, files: string[]): string[] {
  const src = path.join(root, 'src') + path.sep;
  const dist = path.join(root, 'dist') + path.sep;
  const done = new Set<string>();
  const queue = [...files];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (done.has(file)) continue;
    done.add(file);
    const out = compiledPath(file);
    const source = readFileSync(file, 'utf8');
    const fresh =
      existsSync(out) && statSync(out).mtimeMs >= Math.max(statSync(file).mtimeMs, COMPILER_CHANGED);
    const js = fresh
      ? null
      : ts.transpileModule(source, { compilerOptions: OPTIONS, fileName: path.basename(file) }).outputText;
    // The imports are read from the source either way, so that a fresh output's imports are compiled too.
    const targets = new Map<string, string>();
    for (const [, , spec] of source.matchAll(SPECIFIER)) {
      const target = sourceOf(file, spec!);
      if (!target) continue;
      targets.set(spec!, target);
      if (!target.startsWith(src)) queue.push(target);
    }
    if (js === null) continue;
    const rewritten = js.replace(SPECIFIER, (whole, quote: string, spec: string) => {
      const target = targets.get(spec);
      if (!target) return whole;
      const to = target.startsWith(src)
        ? path.join(dist, target.slice(src.length).replace(/\.ts$/, '.js'))
        : compiledPath(target);
      let rel = path.relative(path.dirname(file), to);
      if (!rel.startsWith('../')) rel = `./${rel}`;
      return `${quote}${rel}${quote}`;
    });
    writeFileSync(out, `${MARK}${path.basename(file)} */ ${rewritten}`);
  }
  return files.map(compiledPath);
}

/** Removes the compiled files under `dir` (outside node_modules and dist) whose source is gone. */
export function removeStale(dir: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') removeStale(at);
    } else if (entry.name.startsWith('.') && entry.name.endsWith('.js')) {
      const source = path.join(dir, `${entry.name.slice(1, -3)}.ts`);
      if (!existsSync(source) && readFileSync(at, 'utf8').startsWith(MARK)) rmSync(at);
    }
  }
}
