/**
 * Every exchange with the live channels that their published documents describe, checked against
 * those documents: Stoplight Prism stands between Paygate's adapters and the fakes and refuses any
 * request or answer that breaks Setu's UMAP or Cashfree's Payouts document. Covered: QR creation
 * (and its documented 400 and 500), QR and payment reads while polling, closing a QR at expiry,
 * transfers and their reads. Setu's login is not in its document and goes straight to the fake;
 * faults the documents do not list (resets, timeouts, 401, 404) are tested without the proxy
 * (test/live/setu-and-cashfree-flows.test.ts). On both databases; zero violations.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { FakeCashfree } from '../support/fake-cashfree.ts';
import { FakeSetu } from '../support/fake-setu.ts';
import { skipFor } from '../support/harness.ts';
import { RECEIVER, useLive } from '../support/live.ts';
import { cliAsync } from '../support/process.ts';
import { istDate } from '../../src/ist.ts';
import { CASHFREE_SPEC, SETU_SPEC, startSpecProxy, type SpecProxy } from '../support/spec-proxy.ts';

const databaseSkip = { sqlite: await skipFor('sqlite'), postgres: await skipFor('postgres') };

describe('the live channels against their published documents', () => {
  let setu: FakeSetu;
  let cashfree: FakeCashfree;
  let setuProxy: SpecProxy;
  let cashfreeProxy: SpecProxy;

  before(async () => {
    setu = await new FakeSetu().start();
    cashfree = await new FakeCashfree().start();
    [setuProxy, cashfreeProxy] = await Promise.all([
      startSpecProxy(SETU_SPEC, setu.url),
      startSpecProxy(CASHFREE_SPEC, cashfree.url),
    ]);
  });

  after(async () => {
    await Promise.all([setuProxy?.stop(), cashfreeProxy?.stop()]);
    await setu?.stop();
    await cashfree?.stop();
  });

  let n = 0;
  for (const kind of DATABASES) {
    describe(`on ${kind}`, { skip: databaseSkip[kind] }, () => {
      const live = useLive(
        kind,
        { PAYIN_EXPIRY_S: '2', CHANNEL_POLL_MS: '300', CHANNEL_TIMEOUT_MS: '5000' },
        () => ({
          fakes: { setu, cashfree },
          proxies: { setu: setuProxy.url, cashfree: cashfreeProxy.url },
        }),
      );
      const orderNo = (p: string) => `${p}-${kind}-${++n}`;

      it('creates QRs, settles by notification and by polling, and closes an unpaid QR at expiry', async () => {
        const l = live();
        const onsite = await l.post('/payments/onsite/payin', {
          money: { amount: 120 },
          merchant_order_no: orderNo('on'),
        });
        const offsite = await l.post('/payments/offsite/payin', {
          money: { amount: 80.5 },
          merchant_order_no: orderNo('off'),
        });
        const unpaid = await l.post('/payments/p2p/payin', {
          money: { amount: 1 },
          merchant_order_no: orderNo('p2p'),
        });
        for (const r of [onsite, offsite, unpaid]) assert.equal(r.status, 200, r.text);
        const notified = await setu.pay(onsite.body.payment_id);
        const polled = await setu.pay(offsite.body.payment_id, { notify: false });
        assert.equal((await l.waitStatus('payin', onsite.body.payment_id, 'SUCCESS')).utr, notified.rrn);
        assert.equal((await l.waitStatus('payin', offsite.body.payment_id, 'SUCCESS', 8000)).utr, polled.rrn);
        await l.waitStatus('payin', unpaid.body.payment_id, 'FAILED', 8000);
        assert.equal(setu.qrFor(unpaid.body.payment_id)!.status, 'closed');
        await l.ledgerOk();
      });

      it("passes on Setu's documented refusals: 400 as CHANNEL_REJECTED, 500 as CHANNEL_UNAVAILABLE", async () => {
        const l = live();
        setu.fail('dqr_create', {
          status: 400,
          body: { code: 'invalid-amount', detail: 'too small', docUrl: 'https://docs.setu.co' },
        });
        const rejected = await l.post('/payments/onsite/payin', {
          money: { amount: 5 },
          merchant_order_no: orderNo('rej'),
        });
        assert.equal(rejected.body.error.error_code, 'CHANNEL_REJECTED');
        setu.fail('dqr_create', { status: 500, body: { code: 'internal-error', detail: 'down' } });
        const down = await l.post('/payments/onsite/payin', {
          money: { amount: 5 },
          merchant_order_no: orderNo('down'),
        });
        assert.equal(down.status, 503);
      });

      it('sends transfers and reads them, settling by webhook and by polling', async () => {
        const l = live();
        const byWebhook = await l.post('/payments/payout', {
          money: { amount: 250 },
          merchant_order_no: orderNo('po'),
          receiver: RECEIVER,
        });
        assert.equal(byWebhook.status, 200);
        await l.waitStatus('payout', byWebhook.body.payment_id, 'SUCCESS');
        cashfree.webhooks = false;
        cashfree.endAfterMs = 200;
        try {
          const byPoll = await l.post('/payments/payout', {
            money: { amount: 99.01 },
            merchant_order_no: orderNo('po'),
            receiver: RECEIVER,
          });
          await l.waitStatus('payout', byPoll.body.payment_id, 'SUCCESS', 8000);
          assert.ok(cashfree.count('transfer_read') >= 1);
        } finally {
          cashfree.webhooks = true;
          cashfree.endAfterMs = 0;
        }
        await l.ledgerOk();
      });

      it("reconciles through the documents: Setu's /history and Cashfree's transfer read", async () => {
        const l = live();
        const payin = await l.post('/payments/onsite/payin', {
          money: { amount: 130 },
          merchant_order_no: orderNo('rec'),
        });
        const payout = await l.post('/payments/payout', {
          money: { amount: 140 },
          merchant_order_no: orderNo('rec'),
          receiver: RECEIVER,
        });
        await setu.pay(payin.body.payment_id);
        await l.waitStatus('payin', payin.body.payment_id, 'SUCCESS');
        await l.waitStatus('payout', payout.body.payment_id, 'SUCCESS');
        const second = await setu.pay(payin.body.payment_id, { notify: false });
        const transfer = cashfree.transfers.get(payout.body.payment_id)!;
        transfer.transfer_utr = '444000111222';
        const run = await cliAsync(['reconcile', '--date', istDate(Date.now()), '--json'], {
          DATABASE_URL: l.gw.testDb.url,
          ...setu.env(setuProxy.url),
          ...cashfree.env(cashfreeProxy.url),
        });
        assert.equal(run.status, 0, run.stderr + run.stdout);
        for (const r of run.json.runs) assert.equal(r.unreadable, 0, JSON.stringify(r));
        const found = await l.gw.database.db
          .selectFrom('channel_exceptions')
          .select('reference')
          .where('kind', '=', 'reconcile_mismatch')
          .execute();
        assert.deepEqual(
          found.map((e) => e.reference),
          [`${transfer.cf_transfer_id} utr=444000111222`],
        );
        // The second payment moved money: booked into suspense, not kept as a difference.
        const booked = await l.gw.database.db
          .selectFrom('channel_exceptions')
          .select(['kind', 'reference', 'holds'])
          .where('payment_id', '=', payin.body.payment_id)
          .execute();
        assert.deepEqual(booked, [{ kind: 'payment_after_final', reference: second.id, holds: 'suspense' }]);
      });

      it('reports zero violations from either document', () => {
        assert.deepEqual(setuProxy.violations(), []);
        assert.deepEqual(cashfreeProxy.violations(), []);
        assert.ok(
          setuProxy.output().includes('Forwarding "post" request'),
          'requests went through the Setu proxy',
        );
        assert.ok(
          cashfreeProxy.output().includes('Forwarding "get" request'),
          'reads went through the Cashfree proxy',
        );
      });
    });
  }

  it('catches what breaks a document (so zero violations above means something)', async () => {
    const before = cashfreeProxy.violations().length;
    const res = await fetch(`${cashfreeProxy.url}/transfers`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-version': '2024-01-01',
        'x-client-id': 'x',
        'x-client-secret': 'y',
      },
      body: JSON.stringify({ transfer_amount: 'ten' }),
    });
    await res.arrayBuffer();
    assert.equal(res.status, 422);
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(cashfreeProxy.violations().length > before);
  });
});
