/**
 * `npm run soak`: the long fault-injection and soak runs, kept out of `npm test` so that the tests a
 * developer runs on every change stay quick. Runs every `test/soak/*.test.ts`, three files at a
 * time (the soaks mostly wait on their providers' rate limits and on RECONCILE_AT), the longest
 * first. The files are listed here rather than by a shell glob, which node would take literally
 * (and fail on) if it matched nothing.
 */
import { longestFirst, runTests, testFiles } from './run-tests.ts';

/** The longest files, longest first. */
const FIRST = [
  'test/soak/reconcile.soak.test.ts',
  'test/soak/reconcile-schedule.soak.test.ts',
  'test/soak/live-payins.test.ts',
];

const files = longestFirst(testFiles('test/soak'), FIRST);
if (files.length === 0) {
  console.log('npm run soak: no test files in test/soak/');
  process.exit(0);
}
runTests(files, ['--test-concurrency=3', '--test-timeout=1800000'], { compiled: true });
