/**
 * Paygate's own account (CONTRACT §10), on both databases, with Paygate's calls to the fake
 * Cashfree going through the spec proxy: a transfer that Cashfree fails or rejects with a
 * `status_code` of the account (each code `specs/CHANNELS.md` lists, table-driven, each reaching
 * Paygate another way: a webhook, a poll, the answer to the send) fails no payout. The payouts wait
 * PENDING with their holds on one `channel_account` exception; once it is resolved (on the command
 * line or as the console does) each is sent again as `{payment_id}_2`, which is read and reconciled
 * like the first, and only one transfer of it can succeed at the fake (which refuses a duplicate
 * transfer_id). A second outage after that opens a new exception.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { ACCOUNT_STATUS_CODES } from '../../src/channels/cashfree/cashfree.channel.ts';
import { transferOf } from '../../src/channels/channel.ts';
import { istDate } from '../../src/ist.ts';
import { ReconcileService } from '../../src/reconcile/reconcile.service.ts';
import { failedTransfers } from '../../src/transactions/payout-transfers.repository.ts';
import { FakeCashfree } from '../support/fake-cashfree.ts';
import { FakeSetu } from '../support/fake-setu.ts';
import { onEachDatabase } from '../support/harness.ts';
import { payout, posts, reads } from '../support/live-payouts.ts';
import { until, useLive, type LiveGateway } from '../support/live.ts';
import { cliAsync, ROOT } from '../support/process.ts';
import { CASHFREE_SPEC, type SpecProxy, useSpecProxy } from '../support/spec-proxy.ts';

const POLL_MS = 400;

/** The account's codes as `specs/CHANNELS.md` lists them, with the status each comes with. */
function accountCodes(): { code: string; status: 'FAILED' | 'REJECTED' }[] {
  const doc = fs.readFileSync(path.join(ROOT, 'specs/CHANNELS.md'), 'utf8');
  const section = doc.split("## Cashfree status codes of Paygate's own account")[1] ?? '';
  return [...section.matchAll(/^\| `([A-Z_]+)` \| (FAILED|REJECTED) \|/gm)].map((m) => ({
    code: m[1]!,
    status: m[2] as 'FAILED' | 'REJECTED',
  }));
}

const CODES = accountCodes();
/** How each code reaches Paygate, in turn. */
const PATHS = ['webhook', 'poll', 'send answer'] as const;

it('specs/CHANNELS.md and the adapter list the same account codes, INSUFFICIENT_BALANCE among them', () => {
  assert.ok(CODES.some((c) => c.code === 'INSUFFICIENT_BALANCE'));
  assert.deepEqual(CODES.map((c) => c.code).sort(), [...ACCOUNT_STATUS_CODES].sort());
});

const cashfreeDocument = useSpecProxy(CASHFREE_SPEC);

await onEachDatabase("Paygate's own Cashfree account", (kind) => {
  let setu: FakeSetu;
  let cashfree: FakeCashfree;
  let proxy: SpecProxy;

  before(async () => {
    setu = await new FakeSetu().start();
    cashfree = await new FakeCashfree().start();
    proxy = await cashfreeDocument.route(cashfree.url);
  });

  after(async () => {
    await setu?.stop();
    await cashfree?.stop();
  });

  describe(`account codes on ${kind}`, () => {
    const live = useLive(kind, { CHANNEL_POLL_MS: String(POLL_MS), CHANNEL_TIMEOUT_MS: '1000' }, () => ({
      fakes: { setu, cashfree },
      proxies: { cashfree: proxy.url },
    }));
    afterEach(async () => {
      Object.assign(cashfree, { ending: 'SUCCESS', endingCode: null, webhooks: true, syncAnswer: false });
      await live().ledgerOk();
    });

    /** A payout whose transfer fails with `code`, reaching Paygate by `how`; answers its payment_id once it waits parked. */
    async function failedForAccount(
      l: LiveGateway,
      amount: number,
      c: { code: string; status: 'FAILED' | 'REJECTED' },
      how: (typeof PATHS)[number],
    ): Promise<string> {
      cashfree.webhooks = how !== 'poll';
      let id: string;
      if (how === 'send answer') {
        Object.assign(cashfree, { syncAnswer: true, ending: c.status, endingCode: c.code });
        id = await payout(l, amount);
      } else {
        cashfree.ending = 'never';
        id = await payout(l, amount);
        await until(() => cashfree.transfers.has(id), 'the transfer');
        await cashfree.end(id, c.status, c.code);
      }
      await until(
        async () => (await failedTransfers(l.gw.database.db, id)).length === 1,
        'the payout parked',
      );
      return id;
    }

    async function accountExceptions(l: LiveGateway, code: string) {
      const rows = await l.gw.database.db
        .selectFrom('channel_exceptions')
        .select(['id', 'resolved_at'])
        .where('kind', '=', 'channel_account')
        .where('reference', 'like', `${code}%`)
        .orderBy('id')
        .execute();
      return rows.map((r) => ({ id: Number(r.id), open: r.resolved_at === null }));
    }

    /** Resolves the exception on the command line (`exceptions resolve`) or through the service the console uses. */
    async function resolve(l: LiveGateway, id: number, on: 'cli' | 'console'): Promise<void> {
      if (on === 'console') {
        const r = await l.gw.paygate.services.exceptions.resolve(id, {
          action: 'dismiss',
          note: 'balance topped up',
          actor: 'ops@example.com',
        });
        assert.match(r.message, /sent again under new transfer ids/);
        return;
      }
      const env = { DATABASE_URL: l.gw.testDb.url };
      const args = [
        'exceptions',
        'resolve',
        String(id),
        '--action',
        'dismiss',
        '--note',
        'account fixed',
        '--json',
      ];
      const out = await cliAsync(args, env);
      assert.equal(out.status, 0, out.stderr + out.stdout);
      assert.equal(out.json.exception.status, 'resolved');
    }

    async function reconcile(l: LiveGateway): Promise<void> {
      const { services } = l.gw.paygate;
      const service = new ReconcileService(
        l.gw.database.db,
        { setu: null, cashfree: services.cashfree },
        services.outcomes,
      );
      const run = await service.run(istDate(Date.now()), 'cashfree', 'cli');
      assert.equal(run.mismatched, 0, JSON.stringify(run));
      assert.equal(run.unreadable, 0);
    }

    it('one while open: the alerts of one low-balance outage are one low_balance exception, and an alert after it was resolved opens a new one', async () => {
      const l = live();
      const alert = async (balance: number) => {
        const body = {
          type: 'LOW_BALANCE_ALERT',
          event_time: new Date().toISOString(),
          data: { current_balance: balance },
        };
        const t = { transfer_id: '', cf_transfer_id: '' } as never;
        assert.equal(await cashfree.webhook('LOW_BALANCE_ALERT', t, { body: JSON.stringify(body) }), 200);
      };
      const lows = async () =>
        (
          await l.gw.database.db
            .selectFrom('channel_exceptions')
            .select(['id', 'resolved_at'])
            .where('kind', '=', 'low_balance')
            .orderBy('id')
            .execute()
        ).map((r) => ({ id: Number(r.id), open: r.resolved_at === null }));
      await alert(900);
      await alert(400);
      const [one, ...none] = await lows();
      assert.deepEqual([one?.open, none], [true, []]);
      await l.gw.paygate.services.exceptions.resolve(one!.id, {
        action: 'dismiss',
        note: 'topped up',
        actor: 'cli',
      });
      assert.equal((await l.gw.paygate.services.exceptions.get(one!.id))!.reference, 'low_balance');
      await alert(300);
      assert.deepEqual(
        (await lows()).map((e) => e.open),
        [false, true],
      );
    });

    it('a 403 of the account: one channel_account exception while open; resolved while still refused, the next refusal opens a new one; the payout goes out once the account is fixed', async () => {
      const l = live();
      const last = await l.gw.database.db
        .selectFrom('channel_exceptions')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirst();
      const since = Number(last?.id ?? 0);
      const refused = async () =>
        (
          await l.gw.database.db
            .selectFrom('channel_exceptions')
            .select(['id', 'resolved_at'])
            .where('kind', '=', 'channel_account')
            .where('id', '>', since)
            .orderBy('id')
            .execute()
        ).map((r) => ({ id: Number(r.id), open: r.resolved_at === null }));
      cashfree.accountRefusal = 403;
      try {
        const id = await payout(l, 11);
        await until(async () => (await refused()).length === 1, 'the exception');
        const refusedCalls = () =>
          cashfree.requests.filter(
            (r) => r.answered === 403 && (r.body?.transfer_id === id || r.query.get('transfer_id') === id),
          ).length;
        await until(() => refusedCalls() >= 2, 'a second refused call');
        assert.equal((await refused()).length, 1, 'one while open');
        assert.equal((await l.status('payout', id)).status, 'PENDING');
        await l.gw.paygate.services.exceptions.resolve((await refused())[0]!.id, {
          action: 'dismiss',
          note: 'whitelisted (not yet)',
          actor: 'cli',
        });
        await until(
          async () => (await refused()).length === 2,
          'a new exception for the refusal that goes on',
          15_000,
        );
        assert.deepEqual(
          (await refused()).map((e) => e.open),
          [false, true],
        );
        cashfree.accountRefusal = null;
        // A PENDING payout is tried again after half its age (up to 5 min): a slow machine makes it older.
        await l.waitStatus('payout', id, 'SUCCESS', 45_000);
        assert.equal(cashfree.created.get(id), 1);
        await l.gw.paygate.services.exceptions.resolve((await refused())[1]!.id, {
          action: 'dismiss',
          note: 'whitelisted',
          actor: 'cli',
        });
      } finally {
        cashfree.accountRefusal = null;
      }
    });

    for (const [i, c] of CODES.entries()) {
      const how = PATHS[i % PATHS.length]!;
      it(`${c.status} ${c.code} (by ${how}): payouts wait PENDING with their holds on one exception, are sent again as {payment_id}_2 once it is resolved, and a second outage opens a new one`, async () => {
        const l = live();
        const before = await l.balance();
        const a = await failedForAccount(l, 101.5, c, how);
        const b = await failedForAccount(l, 7, c, how);
        for (const id of [a, b]) assert.equal((await l.status('payout', id)).status, 'PENDING');
        assert.deepEqual(await l.balance(), {
          available: before.available - 10_850,
          held: before.held + 10_850,
        });
        const [first, ...more] = await accountExceptions(l, c.code);
        assert.deepEqual([first?.open, more], [true, []], 'one open channel_account exception for both');
        assert.deepEqual(
          (await failedTransfers(l.gw.database.db, a)).map((t) => [
            t.transfer_id,
            t.status_code,
            t.exception_id,
          ]),
          [[a, c.code, first!.id]],
        );
        // Open at both ends: reconciliation finds nothing to book or report while they wait.
        await reconcile(l);
        assert.equal((await l.status('payout', a)).status, 'PENDING');

        Object.assign(cashfree, { ending: 'SUCCESS', endingCode: null, syncAnswer: false });
        await resolve(l, first!.id, i === 0 ? 'cli' : 'console');
        for (const id of [a, b]) {
          const done = await l.waitStatus('payout', id, 'SUCCESS', 15_000);
          assert.equal(done.utr, cashfree.transfers.get(`${id}_2`)!.transfer_utr);
          assert.deepEqual(
            [posts(cashfree, id).length, posts(cashfree, `${id}_2`).length],
            [1, 1],
            'one send of each transfer',
          );
          assert.equal(cashfree.transfers.get(id)!.status, c.status);
          const paid = [...cashfree.transfers.values()].filter(
            (t) => transferOf(t.transfer_id).paymentId === id && t.status === 'SUCCESS',
          );
          assert.deepEqual(
            paid.map((t) => t.transfer_id),
            [`${id}_2`],
          );
          await l.receiver.waitFor(() => l.receiver.forPayment(id).length === 1, 'the callback');
          assert.equal(l.receiver.forPayment(id)[0]!.body.status, 'SUCCESS');
        }
        if (how === 'poll') assert.ok(reads(cashfree, `${a}_2`).length >= 1, 'the new transfer is polled');
        assert.deepEqual(await l.balance(), { available: before.available - 10_850, held: before.held });

        // Only one transfer of it can succeed: a duplicate of the new id is refused, and a late word
        // on the first transfer changes nothing.
        const again = await fetch(`${proxy.url}/transfers`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-client-id': cashfree.clientId,
            'x-client-secret': cashfree.clientSecret,
            'x-api-version': '2024-01-01',
          },
          body: JSON.stringify(posts(cashfree, `${a}_2`)[0]!.body),
        });
        assert.equal(again.status, 400);
        assert.equal((await again.json()).code, 'transfer_id_already_exists');
        if (cashfree.webhooks)
          assert.equal(await cashfree.webhook(`TRANSFER_${c.status}`, cashfree.transfers.get(a)!), 200);
        assert.equal((await l.status('payout', a)).status, 'SUCCESS');
        await reconcile(l);
        assert.deepEqual(await l.exceptions(a), []);

        // A second outage after the first was resolved opens a new exception, and is resolved the same way.
        const c2 = await failedForAccount(l, 3, c, how);
        const after = await accountExceptions(l, c.code);
        assert.deepEqual(
          after.map((e) => e.open),
          [false, true],
        );
        Object.assign(cashfree, { ending: 'SUCCESS', endingCode: null, syncAnswer: false });
        await resolve(l, after[1]!.id, 'console');
        await l.waitStatus('payout', c2, 'SUCCESS', 15_000);
        assert.equal(posts(cashfree, `${c2}_2`).length, 1);
      });
    }
  });
});
