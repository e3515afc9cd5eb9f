/**
 * `npm run soak`: the long fault-injection and soak runs, kept out of `npm test` so that the tests a
 * developer runs on every change stay quick. Runs every `test/soak/*.test.ts` with node's test
 * runner. The files are listed here rather than by a shell glob, which node would take literally
 * (and fail on) if it matched nothing.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'test/soak');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.test.ts'))
  .sort()
  .map((f) => path.join('test/soak', f));

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
  ['--import', 'tsx', '--test', '--test-timeout=1800000', ...options, ...(named.length ? named : files)],
  { cwd: root, stdio: 'inherit' },
);
process.exit(run.status ?? 1);
