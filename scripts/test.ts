/**
 * `npm test`: every test file, run by node's test runner several files at a time. Most files spend
 * their time waiting (on Chromium, a child process, a callback), so three at once keep two cores
 * busy. The files that take longest start first, so that none of them is left running alone at the
 * end. Files named as arguments run alone; other arguments are passed on to `node --test`
 * (`npm test -- --test-concurrency=1` runs one file at a time; `npm test -- --test-name-pattern=refund`
 * runs some tests).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The longest files, longest first (by their time alone on 2 cores). */
const FIRST = [
  'test/dashboard-browser.test.ts',
  'test/dashboard.test.ts',
  'test/console-phone-browser.test.ts',
  'test/live-payouts.test.ts',
  'test/live-payins.test.ts',
  'test/channels-check.test.ts',
  'test/console-users.test.ts',
  'test/cli.test.ts',
];

function testFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir))
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => path.join(dir, f));
}

const examples = readdirSync(path.join(root, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) => testFiles(path.join('examples', d.name)));
const all = [...testFiles('test'), ...testFiles('client/test'), ...examples];
const files = [...FIRST.filter((f) => all.includes(f)), ...all.filter((f) => !FIRST.includes(f))];

const args = process.argv.slice(2);
// Files named on the command line run alone (`npm test -- test/payouts.test.ts`); other arguments go to node.
const named = args.filter((a) => a.endsWith('.test.ts'));
const options = args.filter((a) => !a.endsWith('.test.ts'));
const run = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=3',
    '--test-timeout=600000',
    ...options,
    ...(named.length ? named : files),
  ],
  { cwd: root, stdio: 'inherit' },
);
process.exit(run.status ?? 1);
