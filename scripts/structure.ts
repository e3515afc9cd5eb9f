/**
 * `npm run structure`: the shape of the code, read from its imports. A room is a folder of `src/`
 * (or a file at its top), or one of `bench/`, `scripts/`, `bin/`, `client/`. It prints:
 *
 * - the import circles between files (none is allowed);
 * - the rooms in layers: a room stands above every room it imports, rooms in one circle of rooms
 *   are ordered so that the fewest imports run back up (greedy, as Eades, Lin and Smyth order a
 *   graph), and every such import is listed: a file in the wrong room;
 * - the files over `--max-lines` (400) and the functions over `--max-function` (80) lines in `src/`,
 *   `bench/`, `scripts/` and `client/` (migrations aside).
 *
 * `--json` prints the same as one object. The test of the house (`test/house/structure.test.ts`)
 * holds the limits. Type-only imports count: a type names the room it belongs to.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The trees whose files are read; `src/` is opened one folder deeper. */
const TREES = ['src', 'sim', 'bench', 'scripts', 'bin', 'client/src'];
const SOURCE = /\.(ts|js|mjs)$/;

export interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

export interface Structure {
  files: string[];
  imports: Import[];
  /** Files that import each other in a loop, one list per loop. */
  circles: string[][];
  /** The rooms from the top layer down. */
  layers: string[][];
  /** Imports from a room to a room in a higher layer. */
  upward: Import[];
  /** Pairs of rooms with at least one upward import. */
  upwardPairs: string[];
  longFiles: { file: string; lines: number }[];
  longFunctions: { file: string; name: string; line: number; lines: number }[];
}

function walk(dir: string): string[] {
  const abs = path.join(ROOT, dir);
  let entries: string[];
  try {
    entries = readdirSync(abs);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const rel = path.posix.join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) return [];
    return statSync(path.join(ROOT, rel)).isDirectory() ? walk(rel) : SOURCE.test(name) ? [rel] : [];
  });
}

/** The room a file lives in. */
export function roomOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'src') return parts.length > 2 ? `src/${parts[1]}/` : file;
  if (parts[0] === 'client') return 'client/';
  return `${parts[0]}/`;
}

function resolve(from: string, spec: string, known: Set<string>): string | null {
  if (!spec.startsWith('.')) return null;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  const tries = [base, base.replace(/\.js$/, '.ts'), `${base}.ts`, `${base}/index.ts`];
  return tries.find((t) => known.has(t)) ?? null;
}

function parse(file: string): ts.SourceFile {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

/** The imports of one file: static ones (type-only when every name they bring is a type), re-exports and `import()`. */
function importsOf(source: ts.SourceFile, known: Set<string>): Import[] {
  const out: Import[] = [];
  const add = (spec: ts.Expression | undefined, typeOnly: boolean) => {
    if (!spec || !ts.isStringLiteral(spec)) return;
    const to = resolve(source.fileName, spec.text, known);
    if (to) out.push({ from: source.fileName, to, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const c = node.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : null;
      const typeOnly =
        c !== undefined &&
        (c.isTypeOnly ||
          (c.name === undefined && named !== null && named.length > 0 && named.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier, typeOnly);
    } else if (ts.isExportDeclaration(node)) {
      const named =
        node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : null;
      add(
        node.moduleSpecifier,
        node.isTypeOnly || (named !== null && named.length > 0 && named.every((e) => e.isTypeOnly)),
      );
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      add(node.arguments[0], false);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** Strongly connected parts of a graph (Tarjan), each as a list of its nodes. */
export function components(nodes: string[], edges: Map<string, Set<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const part: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        part.push(w);
      } while (w !== v);
      out.push(part.sort());
    }
  };
  for (const v of [...nodes].sort()) if (!idx.has(v)) visit(v);
  return out;
}

/**
 * An order of one circle of rooms (the first is highest) that leaves few imports running back up:
 * rooms that import nothing left in the part go last, rooms nothing imports go first, and
 * otherwise the room whose outgoing imports most exceed its incoming ones goes first.
 */
function orderCircle(part: string[], weight: Map<string, Map<string, number>>): string[] {
  const left = new Set(part);
  const head: string[] = [];
  const tail: string[] = [];
  const w = (a: string, b: string) => weight.get(a)?.get(b) ?? 0;
  const out = (v: string) => [...left].reduce((s, u) => s + (u === v ? 0 : w(v, u)), 0);
  const inn = (v: string) => [...left].reduce((s, u) => s + (u === v ? 0 : w(u, v)), 0);
  while (left.size > 0) {
    let moved = true;
    while (moved) {
      moved = false;
      for (const v of [...left].sort()) {
        if (out(v) === 0) {
          tail.unshift(v);
          left.delete(v);
          moved = true;
        } else if (inn(v) === 0) {
          head.push(v);
          left.delete(v);
          moved = true;
        }
      }
    }
    if (left.size === 0) break;
    const best = [...left].sort((a, b) => out(b) - inn(b) - (out(a) - inn(a)) || (a < b ? -1 : 1))[0]!;
    head.push(best);
    left.delete(best);
  }
  return [...head, ...tail];
}

function layersOf(rooms: string[], imports: Import[]): { layers: string[][]; rank: Map<string, number> } {
  const weight = new Map<string, Map<string, number>>();
  for (const i of imports) {
    const [a, b] = [roomOf(i.from), roomOf(i.to)];
    if (a === b) continue;
    const m = weight.get(a) ?? new Map<string, number>();
    m.set(b, (m.get(b) ?? 0) + 1);
    weight.set(a, m);
  }
  const edges = new Map([...weight].map(([a, m]) => [a, new Set(m.keys())]));
  // Within each circle of rooms, the order chosen keeps only its forward edges; then every room
  // stands one layer above the highest room it imports.
  const position = new Map<string, number>();
  for (const part of components(rooms, edges))
    orderCircle(part, weight).forEach((r, i) => position.set(r, i));
  const samePart = new Map<string, number>();
  components(rooms, edges).forEach((part, n) => part.forEach((r) => samePart.set(r, n)));
  const forward = (a: string, b: string) =>
    samePart.get(a) !== samePart.get(b) || position.get(a)! < position.get(b)!;
  const height = new Map<string, number>();
  const heightOf = (r: string): number => {
    const known = height.get(r);
    if (known !== undefined) return known;
    height.set(r, 0);
    let h = 0;
    for (const b of edges.get(r) ?? []) if (forward(r, b)) h = Math.max(h, heightOf(b) + 1);
    height.set(r, h);
    return h;
  };
  for (const r of rooms) heightOf(r);
  const top = Math.max(0, ...height.values());
  const layers: string[][] = Array.from({ length: top + 1 }, () => []);
  for (const r of [...rooms].sort()) layers[top - height.get(r)!]!.push(r);
  return { layers, rank: height };
}

/** Every function, method, accessor and arrow function, with its length in lines (nested ones count on their own too). */
function functionsOf(source: ts.SourceFile) {
  const found: { file: string; name: string; line: number; lines: number }[] = [];
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = lineOf(node.getStart(source));
      const lines = lineOf(node.getEnd()) - first + 1;
      found.push({ file: source.fileName, name: nameOf(node), line: first + 1, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A function's name: its own, or that of the variable, property or call it is given to. */
function nameOf(node: ts.Node): string {
  const own = (node as { name?: ts.Node }).name;
  if (own && (ts.isIdentifier(own) || ts.isStringLiteral(own) || ts.isPrivateIdentifier(own))) {
    const holder =
      node.parent && ts.isClassLike(node.parent) && node.parent.name ? `${node.parent.name.text}.` : '';
    return holder + own.text;
  }
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const p = node.parent;
  if (
    p &&
    (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) &&
    ts.isIdentifier(p.name)
  )
    return p.name.text;
  if (p && ts.isCallExpression(p)) return `(argument of ${p.expression.getText().slice(0, 40)})`;
  return '(anonymous)';
}

const MIGRATION = /(^|\/)(migrations|[\w-]+\.migration)\.ts$/;

export function readStructure(maxLines = 400, maxFunction = 80): Structure {
  const files = TREES.flatMap(walk).sort();
  const sources = new Map(files.map((f) => [f, parse(f)]));
  const known = new Set(files);
  const imports = files.flatMap((f) => importsOf(sources.get(f)!, known));
  const fileEdges = new Map<string, Set<string>>();
  for (const i of imports) {
    const s = fileEdges.get(i.from) ?? new Set<string>();
    s.add(i.to);
    fileEdges.set(i.from, s);
  }
  const circles = components(files, fileEdges).filter((c) => c.length > 1);
  const rooms = [...new Set(files.map(roomOf))];
  const { layers, rank } = layersOf(rooms, imports);
  const upward = imports.filter(
    (i) => rank.get(roomOf(i.to))! >= rank.get(roomOf(i.from))! && roomOf(i.from) !== roomOf(i.to),
  );
  const upwardPairs = [...new Set(upward.map((i) => `${roomOf(i.from)} -> ${roomOf(i.to)}`))].sort();
  const measured = files.filter((f) => !f.startsWith('bin/') && !MIGRATION.test(f) && f.endsWith('.ts'));
  const longFiles: Structure['longFiles'] = [];
  const longFunctions: Structure['longFunctions'] = [];
  for (const f of measured) {
    const text = sources.get(f)!.text;
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > maxLines) longFiles.push({ file: f, lines });
    longFunctions.push(...functionsOf(sources.get(f)!).filter((fn) => fn.lines > maxFunction));
  }
  return { files, imports, circles, layers, upward, upwardPairs, longFiles, longFunctions };
}

function main(argv: string[]): void {
  const num = (flag: string, fallback: number) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? Number(argv[i + 1]) : fallback;
  };
  const s = readStructure(num('--max-lines', 400), num('--max-function', 80));
  if (argv.includes('--json')) {
    const { files, imports, ...rest } = s;
    console.log(JSON.stringify({ files: files.length, imports: imports.length, ...rest }, null, 2));
    return;
  }
  console.log(`${s.files.length} files, ${s.imports.length} imports between them`);
  console.log(`\nimport circles between files: ${s.circles.length}`);
  for (const c of s.circles) console.log(`  ${c.join(' <-> ')}`);
  console.log('\nlayers, top first:');
  s.layers.forEach((l, i) => console.log(`  ${String(s.layers.length - i).padStart(2)}  ${l.join('  ')}`));
  console.log(`\nimports that run back up: ${s.upward.length} (${s.upwardPairs.length} pairs of rooms)`);
  for (const i of s.upward) console.log(`  ${i.from} -> ${i.to}${i.typeOnly ? ' (types only)' : ''}`);
  console.log(`\nfiles over the limit: ${s.longFiles.length}`);
  for (const f of s.longFiles) console.log(`  ${f.file} ${f.lines}`);
  console.log(`\nfunctions over the limit: ${s.longFunctions.length}`);
  for (const f of s.longFunctions) console.log(`  ${f.file}:${f.line} ${f.name} ${f.lines}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  main(process.argv.slice(2));
