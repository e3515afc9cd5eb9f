/**
 * The CLI's help and usage errors, byte for byte: every command's `--help`, `--help --json` and
 * `help COMMAND`, the list of all commands, and the one-line refusals that need no database, compared
 * with `test/vectors/cli-help.json`. A change of wording on purpose updates that file:
 * `UPDATE_CLI_HELP=1 node --import tsx --test test/cli-help.test.ts`, then read the diff.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from './support/process.ts';

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
  'channels check',
  'channels exceptions',
  'user create',
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
  ['merchant', 'create', '--name'],
  ['callbacks', 'resend', 'a', 'b', '--json'],
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

/** Runs every invocation, two at a time (one per core of the machines this runs on). */
async function runAll(): Promise<Outcome[]> {
  const results: Outcome[] = new Array(INVOCATIONS.length);
  let next = 0;
  const worker = async () => {
    while (next < INVOCATIONS.length) {
      const i = next++;
      results[i] = await paygate(INVOCATIONS[i]!);
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

describe('paygate help and usage errors', () => {
  it('prints, byte for byte, what test/vectors/cli-help.json holds', async () => {
    const actual = await runAll();
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
    // The vectors themselves say something: each command's own help, in words and in JSON.
    for (const c of COMMANDS) {
      const help = expected.find((o) => o.args.join(' ') === `${c.join(' ')} --help`)!;
      assert.equal(help.status, 0);
      assert.ok(help.stdout.startsWith(`Usage: paygate ${c.join(' ')}`), help.stdout);
      const json = expected.find((o) => o.args.join(' ') === `${c.join(' ')} --help --json`)!;
      assert.equal(json.stdout, `${JSON.stringify({ usage: help.stdout.replace(/\n$/, '') })}\n`);
    }
  });
});
