/**
 * `npm test`: every test file, run by node's test runner several files at a time. Most files spend
 * their time waiting (on Chromium, a child process, a callback), so four at once keep two cores
 * busy (three kept them 1.4 busy). The files that take longest start first, so that none of them is
 * left running alone at the end. Files named as arguments run alone; other arguments are passed on
 * to `node --test` (`npm test -- --test-concurrency=1` runs one file at a time;
 * `npm test -- --test-name-pattern=refund` runs some tests).
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { longestFirst, root, runTests, testFiles } from './run-tests.ts';

/**
 * The longest files, longest first (by their time in a whole run), one Chromium file among the
 * first four: those late in the alphabet would otherwise start last and run on alone.
 */
const FIRST = [
  'test/dashboard/console-browser.test.ts',
  'test/cli/channels-check.test.ts',
  'test/reconcile/differences.test.ts',
  'test/reconcile/after-final.test.ts',
  'test/dashboard/phone-layout-browser.test.ts',
  'test/dashboard/refund-needs-confirmation-browser.test.ts',
  'test/dashboard/sign-in-isolation-and-lists.test.ts',
  'test/dashboard/ops-team-pages-browser.test.ts',
  'test/cli/commands.test.ts',
  'test/live/setu-and-cashfree-flows.test.ts',
  'test/live/payouts-sent-once.test.ts',
  'test/payouts/never-overdraw.test.ts',
  'test/cli/channels-rehearse.test.ts',
  'test/live/payins-production-rules.test.ts',
  'test/cli/refund-commands.test.ts',
  'client/test/pack.test.ts',
  'test/live/intake-cannot-be-starved.test.ts',
  'test/live/live-merchant-end-to-end.test.ts',
  'test/refunds/across-processes.test.ts',
  'test/upi/qr-reads-back.test.ts',
  'test/live/channel-silence.test.ts',
  'test/payins/create-and-status.test.ts',
  'test/live/paygate-own-account.test.ts',
  'test/worker/failed-reads-back-off.test.ts',
];

const examples = readdirSync(path.join(root, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) => testFiles(path.join('examples', d.name)));
const files = longestFirst([...testFiles('test'), ...testFiles('client/test'), ...examples], FIRST);

runTests(files, ['--test-concurrency=4', '--test-timeout=600000'], { compiled: true });
