/**
 * The README as a newcomer follows it: a gateway started with the settings of the walk-through's
 * start line and its workers running, the README's callback receiver run as written, its curl
 * walk-through run with bash and curl (pay-in, settle, status, offsite, P2P, payout, balance,
 * refund), each reply and each callback the receiver prints compared with what the README shows
 * (the same keys, the same values where they do not vary, the same types where they do), its
 * openssl check printing OK for the token the receiver printed and MISMATCH for another, and its
 * CLI blocks (`merchant create`, `wallet show`, `user create`) against what the commands print.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startGateway, type Gateway } from '../support/harness.ts';
import { cliAsync, freePort, ROOT } from '../support/process.ts';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The text of a `## ` section, up to the next one. */
function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, title);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

function shBlocks(text: string): string[] {
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

interface Step {
  command: string;
  /** The reply the README shows under the command (its `# ` lines), or null. */
  shown: string | null;
}

/** The commands of a block (continued lines joined), each with the `# ` lines that follow it. */
function steps(block: string): Step[] {
  const out: Step[] = [];
  const lines = block.replace(/\\\n\s*/g, ' ').split('\n');
  for (const line of lines) {
    const open = out.at(-1);
    // Inside a quoted -d body that goes on to the next line.
    if (open && (open.command.split("'").length - 1) % 2 === 1) {
      open.command += `\n${line}`;
      continue;
    }
    if (line.startsWith('#')) {
      const last = out.at(-1);
      if (last) last.shown = `${last.shown ?? ''}${line.replace(/^#\s?/, '')}`;
    } else if (line.trim() !== '') out.push({ command: line, shown: null });
  }
  return out;
}

/** Values that are the same on every run; any other value is compared by its type only. */
const FIXED = new Set(['success', 'status', 'amount', 'currency', 'message', 'available', 'held']);

function find(value: unknown, key: string): { found: boolean; value?: unknown } {
  if (value === null || typeof value !== 'object') return { found: false };
  if (Object.hasOwn(value, key)) return { found: true, value: (value as Record<string, unknown>)[key] };
  for (const v of Object.values(value)) {
    const r = find(v, key);
    if (r.found) return r;
  }
  return { found: false };
}

/** The README's reply (elided with …, so not always JSON) against the real one. */
function sameShape(shown: string, actual: unknown, where: string): void {
  for (const [, key] of shown.matchAll(/"([A-Za-z_]+)":/g))
    assert.ok(find(actual, key!).found, `${where}: the reply has no ${key}: ${JSON.stringify(actual)}`);
  for (const [, key, literal] of shown.matchAll(
    /"([A-Za-z_]+)":(-?\d+(?:\.\d+)?|true|false|null|"[^"]*")(?=[,}])/g,
  )) {
    const want = JSON.parse(literal!) as unknown;
    const got = find(actual, key!).value;
    if (FIXED.has(key!)) assert.deepEqual(got, want, `${where}: ${key}`);
    else assert.equal(typeof got, typeof want, `${where}: the type of ${key}`);
  }
}

/** A status that no longer changes. */
const FINAL = new Set(['SUCCESS', 'FAILED']);

/** The README's text lines of a CLI block (its `# ` lines) as patterns: `…` stands for any value. */
function linePatterns(shown: string[]): RegExp[] {
  return shown.map(
    (want) => new RegExp(`^${want.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/…/g, '\\S+')}$`),
  );
}

/** The output a CLI block shows under its first command, one line per `# ` line. */
function shownLines(block: string): string[] {
  return block
    .split('\n')
    .filter((l) => l.startsWith('# '))
    .map((l) => l.slice(2));
}

function sameLines(stdout: string, shown: string[], where: string): void {
  const lines = stdout.trimEnd().split('\n');
  assert.equal(lines.length, shown.length, `${where}: ${stdout}`);
  for (const [i, pattern] of linePatterns(shown).entries()) assert.match(lines[i]!, pattern, where);
}

describe('the README, followed as written', () => {
  const walk = section('A walk-through with curl');
  const blocks = shBlocks(walk);
  /** The walk-through's start line: its settings are the gateway's. */
  const start = blocks.flatMap(steps).find((s) => s.command.endsWith('npm start'))!;
  const settings = Object.fromEntries(
    start.command
      .replace(/\s*npm start$/, '')
      .split(/\s+/)
      .map((kv) => kv.split('=') as [string, string]),
  );
  const receiverLine = blocks.flatMap(steps).find((s) => s.command.startsWith('node -e'))!.command;
  const README_PORT = /listen\((\d+)\)/.exec(receiverLine)![1]!;

  let gw: Gateway;
  let port = 0;
  let receiver: ChildProcess;
  /** What the README's receiver printed, line by line. */
  const printed: string[] = [];
  const ids = new Map<string, string>();

  before(async () => {
    assert.deepEqual(Object.keys(settings).sort(), [
      'ALLOW_PRIVATE_CALLBACK_URLS',
      'SANDBOX_PAYOUT_SETTLE_MS',
    ]);
    gw = await startGateway('sqlite', { listen: true, worker: true, env: settings });
    // The receiver as written, on a free port rather than the README's (another program may hold it).
    port = await freePort();
    receiver = spawn('bash', ['-c', receiverLine.split(README_PORT).join(String(port))], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let rest = '';
    receiver.stdout!.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop()!;
      printed.push(...lines);
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const up = await fetch(`http://127.0.0.1:${port}/`).then(
        () => true,
        () => false,
      );
      if (up) break;
      assert.ok(Date.now() < deadline, 'the README receiver listens within 10 s');
      await delay(50);
    }
  });
  after(async () => {
    receiver?.kill();
    await gw?.close();
  });

  /** Runs a README line in bash (asynchronously: the gateway answering it runs in this process). */
  async function bash(script: string): Promise<string> {
    const { stdout } = await promisify(execFile)('bash', ['-c', script], {
      encoding: 'utf8',
      timeout: 30_000,
      env: {
        ...process.env,
        KEY: gw.merchant.api_key,
        WEBHOOK_SECRET: gw.merchant.webhook_secret,
        BASE: gw.baseUrl.replace(/\/$/, ''),
      },
    });
    return stdout;
  }

  /** The line the receiver printed for the callback naming `id` with `status` (waits up to 15 s). */
  async function callbackLine(
    key: string,
    id: string,
  ): Promise<{ token: string; body: Record<string, unknown> }> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      for (const line of printed) {
        const [token, ...json] = line.split(' ');
        if (!json.join(' ').startsWith('{')) continue; // the probe that found the receiver listening
        const body = JSON.parse(json.join(' ')) as Record<string, unknown>;
        if (body[key] === id && FINAL.has(body.status as string)) return { token: token!, body };
      }
      assert.ok(
        Date.now() < deadline,
        `the receiver prints the callback of ${id} within 15 s: ${printed.join('\n')}`,
      );
      await delay(50);
    }
  }

  it('the curl walk-through answers what it shows: pay-in, settle, status, offsite, P2P, payout, balance, refund; the receiver prints the callbacks it shows', async () => {
    const curls = blocks.flatMap(steps).filter((s) => s.command.startsWith('curl '));
    assert.ok(curls.length >= 9, `${curls.length} curl commands`);
    for (const flow of [
      'onsite/payin',
      'sandbox/payin/complete',
      'payin_status',
      'offsite/payin',
      'p2p/payin',
      'payments/payout',
      'wallet/balance',
      'payments/refund',
      'refund_status',
    ])
      assert.ok(
        curls.some((s) => s.command.includes(flow)),
        flow,
      );
    assert.ok(
      curls.every((s) => s.shown !== null),
      'the README shows the reply of every curl command',
    );
    for (const step of curls) {
      let command = step.command.split(`:${README_PORT}/`).join(`:${port}/`);
      for (const [placeholder, id] of ids) command = command.split(placeholder).join(id);
      let reply = JSON.parse(await bash(command)) as Record<string, unknown>;
      // A status read before the sandbox settled: the README says to ask again after a moment.
      const wanted = /"status":"([A-Z]+)"/.exec(step.shown!)?.[1];
      const deadline = Date.now() + 15_000;
      while (command.includes('_status') && FINAL.has(wanted ?? '') && !FINAL.has(reply.status as string)) {
        assert.ok(Date.now() < deadline, `${command.slice(0, 80)}: final within 15 s`);
        await delay(200);
        reply = JSON.parse(await bash(command)) as Record<string, unknown>;
      }
      sameShape(step.shown!, reply, command.slice(0, 80));
      // The README's elided id (Vx3…) stands for this reply's id in the commands that follow.
      for (const key of ['payment_id', 'refund_id']) {
        const placeholder = new RegExp(`"${key}":"([^"]*…)"`).exec(step.shown!)?.[1];
        if (placeholder && typeof reply[key] === 'string' && !ids.has(placeholder))
          ids.set(placeholder, reply[key]);
      }
    }

    // The callbacks the receiver printed, against the lines the README shows for them.
    const shownCallbacks = [...walk.matchAll(/```\n([0-9a-f]{4}…[0-9a-f]{2}) (\{.*\})\n```/g)].map(
      (m) => m[2]!,
    );
    assert.equal(shownCallbacks.length, 2, 'the README shows a pay-in callback and a refund callback');
    const payin = ids.get('Vx3…')!;
    const refund = ids.get('Kd2…')!;
    const payinCallback = await callbackLine('payment_id', payin);
    sameShape(shownCallbacks[0]!, payinCallback.body, 'the pay-in callback');
    sameShape(shownCallbacks[1]!, (await callbackLine('refund_id', refund)).body, 'the refund callback');

    // The signature check prints OK for the token the receiver printed and MISMATCH for any other.
    const check = blocks.find((b) => b.includes('openssl dgst'))!;
    const script = check.split('Vx3…').join(payin);
    const run = async (t: string) => (await bash(script.replace(/^TOKEN=\S+/m, `TOKEN=${t}`))).trim();
    assert.equal(
      payinCallback.token,
      createHmac('sha256', gw.merchant.webhook_secret).update(`${payin}:500.00:SUCCESS`).digest('hex'),
      'the token the receiver printed is the documented HMAC',
    );
    assert.equal(await run(payinCallback.token), 'OK');
    assert.equal(await run('0'.repeat(64)), 'MISMATCH');
  });

  it('the CLI prints what the README shows: merchant create, wallet show, user create', async () => {
    const env = { DATABASE_URL: gw.testDb.url };
    const create = blocks.find((b) => b.includes('paygate merchant create'))!;
    const made = await cliAsync(steps(create)[0]!.command.split(/\s+/).slice(2), env);
    assert.equal(made.status, 0, made.stderr);
    sameLines(made.stdout, shownLines(create), 'merchant create');

    // After the walk-through above: 500.00 paid in, 200.00 paid out and 120.50 refunded, both settled
    // (each SANDBOX_PAYOUT_SETTLE_MS after it was made, which a busy machine can stretch).
    const settledBy = Date.now() + 15_000;
    while ((await gw.paygate.services.wallets.balance(gw.merchant.merchant_id, 'INR')).held !== 0) {
      assert.ok(Date.now() < settledBy, 'the payout and the refund settle');
      await new Promise((r) => setTimeout(r, 100));
    }
    const row = /\| `paygate wallet show[^|]*\|\s*`([^`]+)`/.exec(README)?.[1];
    assert.ok(row, 'the README shows what wallet show prints');
    const shown = await cliAsync(['wallet', 'show', '--merchant', gw.merchant.merchant_id], env);
    assert.equal(shown.status, 0, shown.stderr);
    assert.equal(shown.stdout.trim(), row);

    const block = shBlocks(section('Dashboard')).find((b) => b.includes('user create'))!;
    const step = steps(block).find((s) => s.command.includes('--operator') && !s.command.includes('stdin'))!;
    const args = step.command
      .replace(/\s+#.*$/, '')
      .split(/\s+/)
      .slice(2);
    const user = await cliAsync(args, env);
    assert.equal(user.status, 0, user.stderr);
    sameLines(user.stdout, shownLines(block), 'user create');
  });
});
