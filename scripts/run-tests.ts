/**
 * What `npm test` and `npm run soak` share: finding test files, putting the longest first, and
 * running them with node's test runner. Files named on the command line run alone
 * (`npm test -- test/payouts.test.ts`); other arguments are passed on to `node --test`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIsCurrent } from '../bin/build-current.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The `*.test.ts` files of `dir` (relative to the repository), sorted. */
export function testFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir))
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => path.join(dir, f));
}

/** `files` with those of `first` in front, in its order: started first, none is left running alone at the end. */
export function longestFirst(files: string[], first: string[]): string[] {
  return [...first.filter((f) => files.includes(f)), ...files.filter((f) => !first.includes(f))];
}

/** Runs `files` (or the files named in `argv`) through node's test runner with `nodeArgs`; exits with its status. */
export function runTests(files: string[], nodeArgs: string[], argv = process.argv.slice(2)): never {
  // The `paygate` processes the tests start run dist/ when it is current, and the sources through
  // tsx otherwise, at more than twice the CPU: an edited tree is built first (about 8 s; a type
  // error is reported, and the tests run all the same).
  if (!buildIsCurrent()) {
    console.log('src/ is newer than dist/: npm run build');
    spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  }
  const named = argv.filter((a) => a.endsWith('.test.ts'));
  const options = argv.filter((a) => !a.endsWith('.test.ts'));
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', ...nodeArgs, ...options, ...(named.length ? named : files)],
    { cwd: root, stdio: 'inherit' },
  );
  process.exit(run.status ?? 1);
}
