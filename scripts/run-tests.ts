/**
 * What `npm test` and `npm run soak` share: finding test files, putting the longest first, and
 * running them with node's test runner. Files named on the command line run alone
 * (`npm test -- test/payouts/create-hold-and-settle.test.ts`); other arguments are passed on to `node --test`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIsCurrent } from '../bin/build-current.js';
import { compileTests, removeStale } from './compile-tests.ts';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Folders under a test tree that hold no tests of their own run (helpers, data, the soaks). */
const NOT_TESTS = new Set(['support', 'vectors', 'artifacts', 'soak', 'node_modules', 'dist']);

/** The `*.test.ts` files under `dir` (relative to the repository), its sub-folders included, sorted. */
export function testFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? NOT_TESTS.has(e.name)
          ? []
          : testFiles(path.join(dir, e.name))
        : e.name.endsWith('.test.ts')
          ? [path.join(dir, e.name)]
          : [],
    )
    .sort();
}

/** `files` with those of `first` in front, in its order: started first, none is left running alone at the end. */
export function longestFirst(files: string[], first: string[]): string[] {
  return [...first.filter((f) => files.includes(f)), ...files.filter((f) => !first.includes(f))];
}

/**
 * Runs `files` (or the files named in `argv`) through node's test runner with `nodeArgs`; exits with
 * its status. With `compiled`, a run of all of `files` runs them compiled (`compile-tests.ts`);
 * files named in `argv` run through tsx, as they are.
 */
export function runTests(files: string[], nodeArgs: string[], options: RunOptions = {}): never {
  process.exit(runTestsOnce(files, nodeArgs, options));
}

interface RunOptions {
  argv?: string[];
  compiled?: boolean;
}

/** Runs `files` with node's test runner as `runTests` does, and answers its exit status. */
export function runTestsOnce(
  files: string[],
  nodeArgs: string[],
  { argv = process.argv.slice(2), compiled = false }: RunOptions = {},
): number {
  // The `paygate` processes the tests start run dist/ when it is current, and the sources through
  // tsx otherwise, at more than twice the CPU: an edited tree is built first (about 8 s; a type
  // error is reported, and the tests run all the same).
  if (!buildIsCurrent()) {
    console.log('src/ is newer than dist/: npm run build');
    spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  }
  const named = argv.filter((a) => a.endsWith('.test.ts'));
  const options = argv.filter((a) => !a.endsWith('.test.ts'));
  const loader =
    compiled && named.length === 0 && buildIsCurrent()
      ? compiledRun(files)
      : { args: ['--import', 'tsx'], files: named.length ? named : files };
  const run = spawnSync(
    process.execPath,
    [...loader.args, '--test', ...nodeArgs, ...options, ...loader.files],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  return run.status ?? 1;
}

/** The compiled `files` (relative to the repository) and the flags that run them. */
function compiledRun(files: string[]): { args: string[]; files: string[] } {
  for (const dir of new Set(files.map((f) => f.split(path.sep)[0]!))) removeStale(path.join(root, dir));
  const compiled = compileTests(
    root,
    files.map((f) => path.join(root, f)),
  );
  return { args: ['--enable-source-maps'], files: compiled.map((f) => path.relative(root, f)) };
}
