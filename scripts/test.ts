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

/** The longest files, longest first (by their time in a whole run on 2 cores). */
const FIRST = [
  'test/dashboard/console-browser.test.ts',
  'test/reconcile/after-final.test.ts',
  'test/live/payins-production-rules.test.ts',
  'test/live/payouts-sent-once.test.ts',
  'test/live/channel-silence.test.ts',
  'test/live/paygate-own-account.test.ts',
  'test/channels/exchanges-match-provider-documents.test.ts',
  'test/live/intake-cannot-be-starved.test.ts',
  'test/live/notifications-stored-as-they-can-be.test.ts',
  'test/live/refunds-through-setu.test.ts',
  'test/cli/channels-check.test.ts',
  'test/disputes/disputes-through-setu.test.ts',
  'test/dashboard/phone-layout-browser.test.ts',
  'test/dashboard/sign-in-isolation-and-lists.test.ts',
  'test/cli/channels-rehearse.test.ts',
  'test/cli/commands.test.ts',
  'test/reconcile/differences.test.ts',
  'test/live/live-merchant-end-to-end.test.ts',
  'test/live/setu-and-cashfree-flows.test.ts',
  'test/dashboard/users.test.ts',
];

const examples = readdirSync(path.join(root, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) => testFiles(path.join('examples', d.name)));
const files = longestFirst([...testFiles('test'), ...testFiles('client/test'), ...examples], FIRST);

runTests(files, ['--test-concurrency=4', '--test-timeout=600000'], { compiled: true });
