/**
 * Daily reconciliation (CONTRACT §13) through the fake providers on both databases: what the fakes
 * hold that Paygate never saw is booked where money moved (a reversal, a payment no pay-in keeps, a
 * payout paid after FAILED), each on its exception, and every other difference opens one
 * reconcile_mismatch exception, identified by channel, provider reference, field and provider's
 * value; a second run books and opens nothing; bad input exits 2 having read nothing.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { skipFor, testAccounts } from '../support/harness.ts';
import { cliAsync } from '../support/process.ts';
import { RECEIVER, until, useLive, type LiveGateway } from '../support/live.ts';
import { istDate, istDayBounds } from '../../src/ist.ts';

let n = 0;
const order = (prefix: string) => `${prefix}-${process.pid}-${++n}`;

async function payin(live: LiveGateway, amount = 250.5): Promise<string> {
  const res = await live.post('/payments/onsite/payin', {
    money: { amount },
    merchant_order_no: order('in'),
  });
  assert.equal(res.status, 200, res.text);
  return res.body.payment_id;
}

async function payout(live: LiveGateway, amount = 1200.75): Promise<string> {
  const res = await live.post('/payments/payout', {
    money: { amount },
    merchant_order_no: order('po'),
    receiver: RECEIVER,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.payment_id;
}

/** `paygate reconcile` as an operator runs it, against the gateway's database and the fakes. */
function reconcile(live: LiveGateway, args: string[], env: Record<string, string> = {}) {
  return cliAsync(['reconcile', ...args, '--json'], {
    DATABASE_URL: live.gw.testDb.url,
    // Money booked into suspense stays there (no refund of it joins the day's transactions).
    AUTO_REFUND_UNMATCHED: 'false',
    ...live.setu.env(),
    ...live.cashfree.env(),
    ...env,
  });
}

type Mismatch = { provider: string; reference: string; payment_id: string | null };

async function mismatches(live: LiveGateway): Promise<Mismatch[]> {
  return live.gw.database.db
    .selectFrom('channel_exceptions')
    .select(['provider', 'reference', 'payment_id'])
    .where('kind', '=', 'reconcile_mismatch')
    .orderBy('id')
    .execute();
}

const sorted = (xs: string[]) => [...xs].sort();

/** Signs a new console user in, as a browser does; answers a GET that carries its session. */
async function consoleAs(live: LiveGateway, role: 'operator' | 'merchant') {
  const email = `${role}-${process.pid}-${++n}@example.com`;
  const password = 'a long enough password';
  const merchantId = role === 'merchant' ? live.merchant.merchant_id : null;
  await testAccounts(live.gw.database.db).createUser({ email, role, merchantId, password });
  const app = live.gw.app;
  const form = await app.inject({ method: 'GET', url: '/dashboard/sign-in' });
  const token = /name="csrf" value="([^"]+)"/.exec(form.body)![1]!;
  const res = await app.inject({
    method: 'POST',
    url: '/dashboard/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `paygate_signin=${token}` },
    payload: new URLSearchParams({ email, password, csrf: token }).toString(),
  });
  assert.equal(res.statusCode, 303, res.body.slice(0, 500));
  const raw = res.headers['set-cookie'];
  const cookie = (Array.isArray(raw) ? raw : [String(raw)])
    .find((c) => c.startsWith('paygate_session='))!
    .split(';')[0]!;
  return (url: string) => app.inject({ method: 'GET', url, headers: { cookie } });
}

for (const kind of DATABASES) {
  describe(`reconcile on ${kind}`, { skip: await skipFor(kind) }, () => {
    const live = useLive(kind, { PAYIN_EXPIRY_S: '8', AUTO_REFUND_UNMATCHED: 'false' });
    afterEach(async () => live().ledgerOk());

    it('books what moved money and opens one exception per other difference, nothing again on a second run', async () => {
      const l = live();
      // Pay-ins: five paid, one left to expire (FAILED).
      const expiring = await payin(l);
      const paid = [];
      for (let i = 0; i < 5; i++) {
        paid.push(await payin(l));
        await l.setu.pay(paid.at(-1)!);
      }
      for (const id of paid) await l.waitStatus('payin', id, 'SUCCESS');
      await l.waitStatus('payin', expiring, 'FAILED', 30_000);
      // Payouts: six paid, one failed.
      const sent: string[] = [];
      for (let i = 0; i < 6; i++) sent.push(await payout(l));
      for (const id of sent) await l.waitStatus('payout', id, 'SUCCESS');
      l.cashfree.ending = 'FAILED';
      const failed = await payout(l);
      await l.waitStatus('payout', failed, 'FAILED');
      l.cashfree.ending = 'SUCCESS';

      const first = await reconcile(l, []);
      assert.equal(first.status, 0, first.stderr + first.stdout);
      // Yesterday holds nothing of this test's (everything was created today).
      assert.deepEqual(
        first.json.runs.map((r: any) => [r.channel, r.checked]),
        [
          ['setu', 0],
          ['cashfree', 0],
        ],
      );
      const today = istDate(Date.now());
      const clean = await reconcile(l, ['--date', today]);
      assert.equal(clean.status, 0, clean.stderr + clean.stdout);
      assert.deepEqual(clean.json, {
        runs: [
          { date: today, channel: 'setu', checked: 6, matched: 6, mismatched: 0, unreadable: 0 },
          { date: today, channel: 'cashfree', checked: 7, matched: 7, mismatched: 0, unreadable: 0 },
        ],
      });
      assert.deepEqual(await mismatches(l), []);

      // What the providers now hold and Paygate never heard of.
      const qr = (id: string) => l.setu.qrFor(id)!;
      qr(paid[0]!).payment!.amount += 100; // another amount
      qr(paid[1]!).payment!.rrn = '999000111222'; // another UTR
      const second = await l.setu.pay(paid[2]!, { notify: false }); // a second payment on the QR
      const late = await l.setu.pay(expiring, { notify: false }); // a success Paygate recorded as FAILED
      const transfer = (id: string) => l.cashfree.transfers.get(id)!;
      transfer(sent[0]!).status = 'REVERSED'; // a late reversal
      transfer(sent[1]!).transfer_amount += 1; // another amount
      transfer(sent[2]!).transfer_utr = 'N123456789012'; // another UTR
      l.cashfree.transfers.delete(sent[3]!); // a transfer the provider never received
      transfer(failed).status = 'SUCCESS'; // a success Paygate recorded as FAILED
      transfer(failed).transfer_utr = '555000111222';
      const balance = await l.balance();

      const run = await reconcile(l, ['--date', today]);
      assert.equal(run.status, 0, run.stderr + run.stdout);
      assert.deepEqual(run.json.runs, [
        { date: today, channel: 'setu', checked: 6, matched: 2, mismatched: 4, unreadable: 0 },
        { date: today, channel: 'cashfree', checked: 7, matched: 2, mismatched: 5, unreadable: 0 },
      ]);
      const payment = (id: string) => qr(id).attempts[0]!.id;
      const cf = (id: string) => transfer(id).cf_transfer_id;
      // Where no money moved: one reconcile_mismatch each.
      const expected = [
        `setu ${payment(paid[0]!)} amount=${25050 + 100} ${paid[0]}`,
        `setu ${payment(paid[1]!)} utr=999000111222 ${paid[1]}`,
        `cashfree ${cf(sent[1]!)} amount=${120075 + 100} ${sent[1]}`,
        `cashfree ${cf(sent[2]!)} utr=N123456789012 ${sent[2]}`,
        `cashfree ${sent[3]} status=NOT_FOUND ${sent[3]}`,
      ];
      const seen = (await mismatches(l)).map((m) => `${m.provider} ${m.reference} ${m.payment_id}`);
      assert.deepEqual(sorted(seen), sorted(expected));
      // Where money moved: booked as if the provider had said it at the time, on its exception.
      const kept = await l.gw.database.db
        .selectFrom('channel_exceptions')
        .select(['kind', 'reference', 'payment_id', 'holds'])
        .where('kind', '<>', 'reconcile_mismatch')
        .orderBy('id')
        .execute();
      assert.deepEqual(
        sorted(kept.map((k) => `${k.kind} ${k.reference} ${k.payment_id} ${k.holds}`)),
        sorted([
          `payment_after_final ${second.id} ${paid[2]} suspense`,
          `payment_after_final ${late.id} ${expiring} suspense`,
          `reversal ${sent[0]} ${sent[0]} null`,
          `payout_after_failed ${failed} ${failed} receivable`,
        ]),
      );
      // The reversal's amount is available again; no status changed.
      assert.deepEqual(await l.balance(), { ...balance, available: balance.available + 120075 });
      assert.equal((await l.status('payout', sent[0]!)).status, 'SUCCESS');
      assert.equal((await l.status('payout', sent[0]!)).reversed, true);
      assert.equal((await l.status('payout', failed)).status, 'FAILED');
      assert.equal((await l.status('payin', expiring)).status, 'FAILED');
      await l.receiver.waitFor(
        () => l.receiver.forPayment(sent[0]!).some((c) => c.body.status === 'REVERSED'),
        'the REVERSED callback',
      );

      const again = await reconcile(l, ['--date', today, '--channel', 'cashfree']);
      assert.equal(again.status, 0, again.stderr + again.stdout);
      // The reversal booked, that payout now agrees with Cashfree; so does the one paid after FAILED,
      // now that its money is owed on an exception.
      assert.deepEqual(again.json.runs, [
        { date: today, channel: 'cashfree', checked: 7, matched: 4, mismatched: 3, unreadable: 0 },
      ]);
      const rerun = await reconcile(l, ['--date', today]);
      assert.equal(rerun.status, 0);
      assert.equal((await mismatches(l)).length, expected.length, 'no exception opened twice');
      const runs = await l.gw.database.db
        .selectFrom('reconcile_runs')
        .select(['channel', 'opened', 'finished_at'])
        .where('date', '=', today)
        .orderBy('id')
        .execute();
      assert.deepEqual(
        runs.map((r) => [r.channel, Number(r.opened), r.finished_at !== null]),
        [
          ['setu', 0, true],
          ['cashfree', 0, true],
          ['setu', 2, true],
          ['cashfree', 3, true],
          ['cashfree', 0, true],
          ['setu', 0, true],
          ['cashfree', 0, true],
        ],
      );

      // Cashfree then reverses the payout it paid after FAILED, and its webhook is lost: the next run
      // reads it back, the merchant owes nothing any more, and a further run finds nothing new.
      transfer(failed).status = 'REVERSED';
      const reversed = await reconcile(l, ['--date', today, '--channel', 'cashfree']);
      assert.equal(reversed.status, 0, reversed.stderr + reversed.stdout);
      const owed = await l.gw.database.db
        .selectFrom('channel_exceptions')
        .select(['kind', 'outstanding'])
        .where('reference', '=', failed)
        .orderBy('id')
        .execute();
      assert.deepEqual(
        owed.map((e) => e.kind),
        ['payout_after_failed', 'reversal_after_failed'],
      );
      assert.equal(Number(owed[0]!.outstanding), 0, 'the receivable cancelled');
      const last = await reconcile(l, ['--date', today, '--channel', 'cashfree']);
      assert.deepEqual(last.json.runs, [
        { date: today, channel: 'cashfree', checked: 7, matched: 4, mismatched: 3, unreadable: 0 },
      ]);
    });

    it("lists the runs in the console, and each run's differences, to operators; a merchant's user reads its own differences", async () => {
      const l = live();
      const runs = await l.gw.database.db
        .selectFrom('reconcile_runs')
        .select(['id', 'channel', 'opened'])
        .orderBy('id')
        .execute();
      const opener = runs.find((r) => r.channel === 'cashfree' && Number(r.opened) === 3);
      assert.ok(opener, 'the first test ran (its run opened three Cashfree exceptions)');
      const ops = await consoleAs(l, 'operator');
      const list = await ops('/dashboard/reconcile');
      assert.equal(list.statusCode, 200);
      for (const r of runs)
        assert.ok(list.body.includes(`href="/dashboard/reconcile/${r.id}"`), `run ${r.id}`);
      const one = await ops(`/dashboard/reconcile/${opener.id}`);
      assert.equal(one.statusCode, 200);
      const found = await l.gw.database.db
        .selectFrom('reconcile_mismatches')
        .select(['reference', 'provider_value'])
        .where('run_id', '=', opener.id)
        .execute();
      assert.equal(found.length, 3);
      for (const m of found) {
        assert.ok(one.body.includes(m.reference), m.reference);
        assert.ok(one.body.includes(m.provider_value), m.provider_value);
      }
      assert.equal((await ops('/dashboard/reconcile/999999')).statusCode, 404);
      // A NUL is bad input to every console page (400 before any page handles it).
      assert.equal((await ops('/dashboard/reconcile/x%00')).statusCode, 400);
      assert.equal((await ops('/dashboard/reconcile?before=abc')).statusCode, 400);
      // The differences are about the live merchant's transactions: its user reads them, without the
      // runs' counts (which are of every merchant).
      const shop = await consoleAs(l, 'merchant');
      const own = await shop('/dashboard/reconcile');
      assert.equal(own.statusCode, 200);
      const mine = await shop(`/dashboard/reconcile/${opener.id}`);
      assert.equal(mine.statusCode, 200);
      for (const m of found) assert.ok(mine.body.includes(m.provider_value), m.provider_value);
      assert.doesNotMatch(mine.body, /checked:/);
      assert.ok(!own.body.includes('href="/dashboard/reconcile/'), 'no list of runs');
    });

    it('counts a transaction the provider could not answer for as unreadable, and opens nothing for it', async () => {
      const l = live();
      const id = await payout(l);
      await l.waitStatus('payout', id, 'SUCCESS');
      const before = (await mismatches(l)).length;
      const reads = l.cashfree.count('transfer_read');
      // Every try of every read fails: the provider is down.
      l.cashfree.fail('transfer_read', ...Array.from({ length: 100 }, () => ({ status: 500 })));
      const today = istDate(Date.now());
      const run = await reconcile(l, ['--date', today, '--channel', 'cashfree']);
      l.cashfree.faults.delete('transfer_read');
      assert.equal(run.status, 0, run.stderr + run.stdout);
      const [r] = run.json.runs;
      assert.equal(r.unreadable, r.checked);
      assert.equal(r.matched + r.mismatched, 0);
      // Three reads failed in a row, then the provider was backed off as a whole: the reads after
      // them were not sent at all, and nothing failing was read at full rate.
      const sent = l.cashfree.count('transfer_read') - reads;
      assert.ok(sent >= 3, `three reads failed before the back-off (${sent} sent)`);
      assert.ok(sent <= Math.max(3, r.checked) + 3, `the down provider was backed off (${sent} sent)`);
      assert.equal((await mismatches(l)).length, before);
    });

    it('refuses bad input with one line and exit 2, having read nothing', async () => {
      const l = live();
      const setuBefore = l.setu.requests.length;
      const cfBefore = l.cashfree.requests.length;
      const runsBefore = await l.gw.database.db
        .selectFrom('reconcile_runs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const tomorrow = istDate(Date.now() + 86_400_000);
      const cases: [string[], Record<string, string>, RegExp][] = [
        [['--date', '2026-02-30'], {}, /--date must be a day as YYYY-MM-DD/],
        [['--date', 'yesterday'], {}, /--date must be a day as YYYY-MM-DD/],
        [['--date', tomorrow], {}, /is in the future/],
        [['--channel', 'paypal'], {}, /--channel must be setu or cashfree/],
      ];
      for (const [args, env, message] of cases) {
        const r = await reconcile(l, args, env);
        assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
        assert.equal(r.json.error.code, 'USAGE_ERROR');
        assert.match(r.json.error.message, message);
        assert.equal(r.stdout.trim().split('\n').length, 1);
      }
      // A well-formed request for a channel that is off is refused, not misread: exit 1 with its code.
      const off = await reconcile(l, ['--channel', 'setu'], {
        SETU_BASE_URL: '',
        SETU_CLIENT_ID: '',
        SETU_CLIENT_SECRET: '',
        SETU_MERCHANT_ID: '',
        SETU_WEBHOOK_SECRET: '',
      });
      assert.equal(off.status, 1, off.stdout + off.stderr);
      assert.equal(off.json.error.code, 'LIVE_CHANNEL_NOT_CONFIGURED');
      assert.match(off.json.error.message, /setu is not configured/);
      assert.equal(l.setu.requests.length, setuBefore);
      assert.equal(l.cashfree.requests.length, cfBefore);
      const runsAfter = await l.gw.database.db
        .selectFrom('reconcile_runs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(runsAfter.n), Number(runsBefore.n));
    });

    it('checks a transaction from before the day that is still open, once, and books what the provider says of it', async () => {
      const l = live();
      // Two payouts Cashfree holds PENDING, their webhooks never to come: one created two days
      // before the day, one on the day itself.
      l.cashfree.ending = 'never';
      const older = await payout(l);
      const ofDay = await payout(l);
      const db = l.gw.database.db;
      await until(
        async () => {
          const rows = await db
            .selectFrom('transactions')
            .select('status')
            .where('payment_id', 'in', [older, ofDay])
            .execute();
          return rows.every((r) => r.status === 'PROCESSING');
          // A provider backed off by an earlier outage (the cluster's back-off, on PostgreSQL) is
          // called again within one poll interval of its recovery.
        },
        'both sent',
        75_000,
      );
      l.cashfree.ending = 'SUCCESS';
      const yesterday = istDate(Date.now() - 86_400_000);
      // Not due for the worker meanwhile: only the reconciliation reads them.
      const place = (id: string, createdAt: number) =>
        db
          .updateTable('transactions')
          .set({ created_at: createdAt, next_action_at: Date.now() + 86_400_000 })
          .where('payment_id', '=', id)
          .execute();
      await place(older, Date.now() - 3 * 86_400_000);
      await place(ofDay, istDayBounds(yesterday).from + 1000);
      const run = await reconcile(l, ['--date', yesterday, '--channel', 'cashfree']);
      assert.equal(run.status, 0, run.stderr + run.stdout);
      // Open at both ends: no difference; the one of the day is read once, as the day's own.
      assert.deepEqual(run.json.runs, [
        { date: yesterday, channel: 'cashfree', checked: 2, matched: 2, mismatched: 0, unreadable: 0 },
      ]);
      // Cashfree finishes the older one; its webhook is lost. The next run books it.
      const t = l.cashfree.transfers.get(older)!;
      t.status = 'SUCCESS';
      t.transfer_utr = '777000111222';
      const before = (await mismatches(l)).length;
      const again = await reconcile(l, ['--date', yesterday, '--channel', 'cashfree']);
      assert.equal(again.status, 0, again.stderr + again.stdout);
      assert.deepEqual(again.json.runs, [
        { date: yesterday, channel: 'cashfree', checked: 2, matched: 1, mismatched: 1, unreadable: 0 },
      ]);
      assert.equal((await mismatches(l)).length, before, 'booked, not kept as a difference');
      const done = await l.status('payout', older);
      assert.equal(done.status, 'SUCCESS');
      assert.equal(done.utr, '777000111222');
      // The other is left to the worker, as it would be.
      await db
        .updateTable('transactions')
        .set({ next_action_at: Date.now() })
        .where('payment_id', '=', ofDay)
        .execute();
      l.cashfree.transfers.get(ofDay)!.status = 'SUCCESS';
      await l.waitStatus('payout', ofDay, 'SUCCESS');
    });
  });
}
