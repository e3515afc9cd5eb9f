/**
 * `npm run soak`: the long fault-injection and soak runs, kept out of `npm test` so that the tests a
 * developer runs on every change stay quick. Runs every `test/soak/*.test.ts`, three files at a
 * time (the soaks mostly wait on their providers' rate limits and on RECONCILE_AT), the longest
 * first; the ones that measure a rate at a provider run alone afterwards. The files are listed
 * here rather than by a shell glob, which node would take literally (and fail on) if it matched
 * nothing.
 */
import { longestFirst, runTestsOnce, testFiles } from './run-tests.ts';

/** The longest files, longest first. */
const FIRST = [
  'test/soak/reconcile.soak.test.ts',
  'test/soak/reconcile-schedule.soak.test.ts',
  'test/soak/live-payins.test.ts',
];

/**
 * Files that measure a rate at the provider (the cluster's limit): run alone after the others,
 * since a soak beside them takes the CPU its processes need to keep their turns.
 */
const ALONE = ['test/soak/cluster-rate-limit.soak.test.ts'];

const all = testFiles('test/soak');
if (all.length === 0) {
  console.log('npm run soak: no test files in test/soak/');
  process.exit(0);
}
const files = longestFirst(
  all.filter((f) => !ALONE.includes(f)),
  FIRST,
);
const together = runTestsOnce(files, ['--test-concurrency=3', '--test-timeout=1800000'], {
  compiled: true,
});
const alone = all.filter((f) => ALONE.includes(f));
// Files named on the command line (`npm run soak -- FILE`) ran above, and only they: not again here.
const named = process.argv.slice(2).some((a) => a.endsWith('.test.ts'));
const apart =
  alone.length && !named ? runTestsOnce(alone, ['--test-timeout=1800000'], { compiled: true }) : 0;
process.exit(together || apart);
