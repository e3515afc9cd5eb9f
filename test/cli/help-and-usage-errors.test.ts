/**
 * The CLI's help and usage errors, byte for byte: every command's `--help` and `--help --json`, the
 * list of all commands, and the one-line refusals that need no database, compared with
 * `test/vectors/cli-help.json`. Each is run in this process through the CLI's `main` (what
 * `bin/paygate.js` runs, with the same output streams), and a few through the real binary too, so
 * the process around `main` is checked as well. A change of wording on purpose updates the file:
 * `UPDATE_CLI_HELP=1 node --import tsx --test test/cli/help-and-usage-errors.test.ts`, then read the diff.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { main } from '../../src/cli/main.ts';
import { ROOT } from '../support/process.ts';

const VECTORS = path.join(ROOT, 'test/vectors/cli-help.json');

/** Every command the CLI has; a new one is added here and to the vectors. */
const COMMANDS = [
  'serve',
  'migrate',
  'merchant create',
  'merchant list',
  'merchant disable',
  'merchant enable',
  'merchant rotate-secret',
  'key rotate',
  'wallet credit',
  'wallet show',
  'ledger verify',
  'callbacks list',
  'callbacks resend',
  'refund create',
  'refund show',
  'channels check',
  'channels rehearse',
  'channels exceptions',
  'exceptions resolve',
  'user create',
  'user list',
  'user disable',
  'user enable',
  'user reset-password',
  'reconcile',
  'backup',
].map((c) => c.split(' '));

const GROUPS = [...new Set(COMMANDS.filter((c) => c.length > 1).map((c) => c[0]!))];

const INVOCATIONS: string[][] = [
  [],
  ['--help'],
  ['-h'],
  ['help'],
  ['--help', '--json'],
  ['frobnicate'],
  ['frobnicate', '-h'],
  ['constructor'],
  ['help', 'wallet', 'credit'],
  ['merchant', 'frobnicate', '--json'],
  ...GROUPS.map((g) => [g]),
  ...COMMANDS.flatMap((c) => [
    [...c, '--help'],
    [...c, '--help', '--json'],
  ]),
  ['serve', '--bogus'],
  // serve takes no --json (CONTRACT §1): a usage error, in words.
  ['serve', '--json'],
  ['exceptions', 'resolve', 'x', '--action', 'dismiss'],
  ['merchant', 'create', '--name'],
  ['callbacks', 'resend', 'a', 'b', '--json'],
  ['wallet', 'show', '--merchant', 'a', '--merchant', 'b'],
  ['wallet', 'credit', '--merchant', 'a', '--amount', '-5'],
];

interface Outcome {
  args: string[];
  status: number | null;
  stdout: string;
  stderr: string;
}

function paygate(args: string[]): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/paygate.js'), ...args], {
      // Help and usage errors are answered before any setting is read; a broken one proves it.
      env: { ...process.env, DATABASE_URL: 'nonsense://', PAYIN_EXPIRY_S: '-1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ args, status, stdout, stderr }));
  });
}

/** The same command line through `main` in this process, with the streams a process would have. */
async function inProcess(args: string[]): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const { status } = await main(args, {
    stdout: (line) => (stdout += `${line}\n`),
    stderr: (line) => (stderr += `${line}\n`),
  });
  return { args, status, stdout, stderr };
}

/** Invocations also run through `bin/paygate.js`: help, help in JSON, a refusal in words and in JSON. */
const THROUGH_THE_BINARY = [
  ['--help'],
  ['wallet', 'credit', '--help', '--json'],
  ['frobnicate'],
  ['merchant', 'frobnicate', '--json'],
];

describe('paygate help and usage errors', () => {
  it('prints, byte for byte, what test/vectors/cli-help.json holds', async () => {
    const actual: Outcome[] = [];
    for (const args of INVOCATIONS) actual.push(await inProcess(args));
    if (process.env.UPDATE_CLI_HELP) {
      const prettier = await import('prettier');
      const options = await prettier.resolveConfig(VECTORS);
      fs.writeFileSync(
        VECTORS,
        await prettier.format(JSON.stringify(actual), { ...options, filepath: VECTORS }),
      );
    }
    const expected = JSON.parse(fs.readFileSync(VECTORS, 'utf8')) as Outcome[];
    assert.deepEqual(
      actual.map((o) => o.args),
      expected.map((o) => o.args),
      'the vectors cover the same invocations',
    );
    for (const [i, want] of expected.entries()) assert.deepEqual(actual[i], want, want.args.join(' '));
    const spawned = await Promise.all(THROUGH_THE_BINARY.map(paygate));
    for (const got of spawned) {
      const want = expected.find((o) => o.args.join(' ') === got.args.join(' '));
      assert.ok(want, `${got.args.join(' ')} is in the vectors`);
      assert.deepEqual(got, want, `bin/paygate.js ${got.args.join(' ')}`);
    }
    // The vectors themselves say something: each command's own help, in words and in JSON.
    for (const c of COMMANDS) {
      const help = expected.find((o) => o.args.join(' ') === `${c.join(' ')} --help`)!;
      assert.equal(help.status, 0);
      assert.ok(help.stdout.startsWith(`Usage: paygate ${c.join(' ')}`), help.stdout);
      const json = expected.find((o) => o.args.join(' ') === `${c.join(' ')} --help --json`)!;
      if (c.join(' ') === 'serve') {
        // The one command without --json: its help says so, and answers in words.
        assert.ok(!help.stdout.includes('--json'), help.stdout);
        assert.equal(json.stdout, help.stdout);
      } else assert.equal(json.stdout, `${JSON.stringify({ usage: help.stdout.replace(/\n$/, '') })}\n`);
    }
  });
});
