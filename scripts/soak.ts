/**
 * `npm run soak`: the long fault-injection and soak runs, kept out of `npm test` so that the tests a
 * developer runs on every change stay quick. Runs every `test/soak/*.test.ts` with node's test
 * runner, three files at a time. The files are listed here rather than by a shell glob, which node would take literally
 * (and fail on) if it matched nothing.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'test/soak');
/** The longest files, longest first: they start at once, and the short ones fill in beside them. */
const FIRST = [
  'test/soak/reconcile.soak.test.ts',
  'test/soak/reconcile-schedule.soak.test.ts',
  'test/soak/live-payins.test.ts',
];
const found = readdirSync(dir)
  .filter((f) => f.endsWith('.test.ts'))
  .sort()
  .map((f) => path.join('test/soak', f));
const files = [...FIRST.filter((f) => found.includes(f)), ...found.filter((f) => !FIRST.includes(f))];

if (files.length === 0) {
  console.log('npm run soak: no test files in test/soak/');
  process.exit(0);
}
const args = process.argv.slice(2);
// Files named on the command line run alone (`npm run soak -- test/soak/money.soak.test.ts`); other arguments go to node.
const named = args.filter((a) => a.endsWith('.test.ts'));
const options = args.filter((a) => !a.endsWith('.test.ts'));
const run = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    // Three files at once: the soaks mostly wait on their providers' rate limits and on RECONCILE_AT.
    '--test-concurrency=3',
    '--test-timeout=1800000',
    ...options,
    ...(named.length ? named : files),
  ],
  { cwd: root, stdio: 'inherit' },
);
process.exit(run.status ?? 1);
