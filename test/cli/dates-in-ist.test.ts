/**
 * The CLI prints instants in IST, as the console does: `2026-11-28 14:03:12 IST` in words and RFC 3339
 * with `+05:30` under `--json`, never UTC. Each is checked against the instant stored, written by
 * `Intl` in Asia/Kolkata (not by the code under test).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { skipFor, useGateway } from '../support/harness.ts';
import { paygateInProcess } from '../support/cli-in-process.ts';

const KOLKATA = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'Asia/Kolkata',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/** `2026-11-28 14:03:12` for an instant, in Asia/Kolkata. */
function kolkata(ms: number): string {
  const p = Object.fromEntries(KOLKATA.formatToParts(ms).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/** A --json instant: RFC 3339 in IST, to the millisecond, naming the stored instant. */
function assertIstJson(text: string, ms: number, what: string): void {
  assert.match(text, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+05:30$/, what);
  assert.equal(Date.parse(text), ms, what);
  assert.equal(text.slice(0, 19).replace('T', ' '), kolkata(ms), what);
}

for (const kind of DATABASES) {
  describe(`CLI dates on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind, {
      env: { ALLOW_PRIVATE_CALLBACK_URLS: 'true', WEBHOOK_SECRET_OVERLAP_S: '3600' },
    });

    it('prints merchants, secrets, users and callback deliveries in IST', async () => {
      const g = gw();
      const env = { DATABASE_URL: g.testDb.url, WEBHOOK_SECRET_OVERLAP_S: '3600' };
      const run = async (...args: string[]) => {
        const r = await paygateInProcess(args, env);
        assert.equal(r.status, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
        return r;
      };
      const db = g.database.db;
      const m = g.merchant.merchant_id;

      const merchant = await db
        .selectFrom('merchants')
        .selectAll()
        .where('id', '=', m)
        .executeTakeFirstOrThrow();
      const listed = (await run('merchant', 'list', '--json')).json.merchants[0];
      assertIstJson(listed.created_at, Number(merchant.created_at), 'merchant list created_at');

      const words = await run('merchant', 'rotate-secret', '--merchant', m);
      const rotated = await db
        .selectFrom('merchants')
        .selectAll()
        .where('id', '=', m)
        .executeTakeFirstOrThrow();
      const until = Number(rotated.previous_secret_until);
      assert.ok(words.stdout.includes(`until ${kolkata(until)} IST)`), words.stdout);
      assert.doesNotMatch(words.stdout, /\d\dZ/);
      const json = await run('merchant', 'rotate-secret', '--merchant', m, '--json');
      const again = await db
        .selectFrom('merchants')
        .selectAll()
        .where('id', '=', m)
        .executeTakeFirstOrThrow();
      assertIstJson(json.json.previous_secret_until, Number(again.previous_secret_until), 'rotate-secret');

      await run('user', 'create', '--email', 'clerk@example.com', '--merchant', m);
      const user = await db.selectFrom('users').selectAll().executeTakeFirstOrThrow();
      const table = (await run('user', 'list')).stdout.split('\n');
      assert.match(table[0]!, /\bCREATED\s*$/);
      assert.ok(table[1]!.endsWith(`${kolkata(Number(user.created_at))} IST`), table[1]);
      assertIstJson(
        (await run('user', 'list', '--json')).json.users[0].created_at,
        Number(user.created_at),
        'user',
      );

      const payin = await g.post('/payments/onsite/payin', {
        money: { amount: 5 },
        merchant_order_no: 'ist-1',
        callback_url: 'http://127.0.0.1:9/cb',
      });
      await g.post('/sandbox/payin/complete', { payment_id: payin.body.payment_id, status: 'SUCCESS' });
      const delivery = await db.selectFrom('callback_deliveries').selectAll().executeTakeFirstOrThrow();
      const shown = (await run('callbacks', 'list', '--json')).json.deliveries[0];
      assertIstJson(shown.created_at, Number(delivery.created_at), 'delivery created_at');
    });
  });
}
