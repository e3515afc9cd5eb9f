/**
 * Live channels against stateful fakes of Setu UPI and Cashfree Payouts, over real HTTP, on both
 * databases: pay-ins opened as Setu QRs and settled by signed notifications (in any order,
 * duplicated, late, of another amount), by polling, and at expiry; payouts sent once whatever
 * happens to the call (resets, timeouts, 5xx, refusals), settled by webhook or polling, reversed;
 * bad signatures refused; exceptions kept; the ledger clean after every test.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { onEachDatabase } from '../support/harness.ts';
import { LIVE_VPA, RECEIVER, until, useLive, type LiveGateway } from '../support/live.ts';
import { fakeSetuSignature } from '../support/fake-setu.ts';

let n = 0;
const order = (prefix: string) => `${prefix}-${process.pid}-${++n}`;

async function payin(live: LiveGateway, flow: 'onsite' | 'offsite' | 'p2p', amount = 250.5) {
  const res = await live.post(`/payments/${flow}/payin`, {
    money: { amount },
    merchant_order_no: order(flow),
  });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function payout(live: LiveGateway, amount = 1200.75, name = RECEIVER.name) {
  const res = await live.post('/payments/payout', {
    money: { amount },
    merchant_order_no: order('po'),
    receiver: { ...RECEIVER, name },
  });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

const eventCount = (live: LiveGateway) =>
  live.gw.database.db
    .selectFrom('channel_events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
    .then((r) => Number(r.n));

await onEachDatabase('live channels', (kind) => {
  describe(`live pay-ins through Setu on ${kind}`, () => {
    const live = useLive(kind);
    afterEach(async () => live().ledgerOk());

    it('opens an onsite pay-in as a Setu QR and settles it by a signed notification: utr = rrn, one callback', async () => {
      const l = live();
      const created = await payin(l, 'onsite');
      const qr = l.setu.qrFor(created.payment_id);
      assert.ok(qr, 'a dqr was created with referenceId = payment_id');
      assert.equal(qr.amount, 25050);
      assert.equal(qr.merchantVpa, LIVE_VPA);
      const page = await fetch(`${l.gw.baseUrl}/pay/${created.payment_id}`).then((r) => r.text());
      // The page hands out Setu's intent: its tr is Setu's refId, not the payment_id.
      assert.ok(page.includes(`tr=${qr.refId}`), 'the page links carry the channel reference');
      assert.ok(!page.includes(`tr=${created.payment_id}`));
      assert.equal((await l.status('payin', created.payment_id)).status, 'PENDING');

      const before = await l.balance();
      const payment = await l.setu.pay(created.payment_id);
      const done = await l.waitStatus('payin', created.payment_id, 'SUCCESS');
      assert.equal(done.utr, payment.rrn);
      await l.receiver.waitFor(() => l.receiver.forPayment(created.payment_id).length === 1, 'the callback');
      const [cb] = l.receiver.forPayment(created.payment_id);
      assert.equal(cb!.body.status, 'SUCCESS');
      assert.equal(cb!.body.utr, payment.rrn);
      assert.equal((await l.balance()).available - before.available, 25050);
      const row = await l.gw.database.db
        .selectFrom('transactions')
        .select(['channel', 'channel_txn_id'])
        .where('payment_id', '=', created.payment_id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { channel: 'setu', channel_txn_id: qr.id });
    });

    it("hands out Setu's intentLink as the offsite cashier_string, deep links and QR", async () => {
      const l = live();
      const created = await payin(l, 'offsite', 99.99);
      const qr = l.setu.qrFor(created.payment_id)!;
      assert.ok(created.data.cashier_string.startsWith('upi://pay?'));
      assert.ok(created.data.cashier_string.includes(`tr=${qr.refId}`));
      assert.ok(created.data.deep_links.gpay.startsWith('tez://upi/pay?'));
      assert.ok(created.data.deep_links.gpay.endsWith(created.data.cashier_string.split('?')[1]));
      assert.match(created.data.qrCode, /^data:image\/png;base64,/);
      // A repeat of the order is the same answer and never a second QR.
      const again = await l.post('/payments/offsite/payin', {
        money: { amount: 99.99 },
        merchant_order_no: (
          await l.gw.database.db
            .selectFrom('transactions')
            .select('merchant_order_no')
            .where('payment_id', '=', created.payment_id)
            .executeTakeFirstOrThrow()
        ).merchant_order_no,
      });
      assert.equal(again.status, 200);
      assert.equal(again.body.payment_id, created.payment_id);
      assert.equal([...l.setu.qrs.values()].filter((q) => q.referenceId === created.payment_id).length, 1);
    });

    it('settles once when events come out of order and twice over (success before initiated)', async () => {
      const l = live();
      const created = await payin(l, 'p2p');
      const payment = await l.setu.pay(created.payment_id, {
        order: ['payment.success', 'payment.initiated', 'payment.success'],
      });
      await l.waitStatus('payin', created.payment_id, 'SUCCESS');
      // The same event delivered again (same eventId) is a duplicate.
      const qr = l.setu.qrFor(created.payment_id)!;
      const event = l.setu.event('payment.success', qr, payment);
      assert.equal(await l.setu.send(JSON.stringify(event)), 200);
      assert.equal(await l.setu.send(JSON.stringify(event)), 200);
      await until(() => l.receiver.forPayment(created.payment_id).length >= 1, 'the callback');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(l.receiver.forPayment(created.payment_id).length, 1);
      assert.deepEqual(await l.exceptions(created.payment_id), []);
      const events = await l.gw.database.db
        .selectFrom('channel_events')
        .select(['state', 'type'])
        .where('payment_id', '=', created.payment_id)
        .execute();
      assert.equal(events.length, 4, 'three sent events and one resent, the duplicate stored once');
      assert.ok(events.every((e) => e.state === 'applied'));
    });

    it('keeps a payment of another amount as an exception and leaves the pay-in PENDING', async () => {
      const l = live();
      const created = await payin(l, 'onsite', 500);
      const payment = await l.setu.pay(created.payment_id, { amount: 40000 });
      await until(async () => (await l.exceptions(created.payment_id)).length === 1, 'the exception');
      const [e] = await l.exceptions(created.payment_id);
      assert.deepEqual(e, { kind: 'amount_mismatch', payment_id: created.payment_id, reference: payment.id });
      assert.equal((await l.status('payin', created.payment_id)).status, 'PENDING');
      assert.equal(l.receiver.forPayment(created.payment_id).length, 0);
    });

    it('does not fail a pay-in on payment.failed while its QR can still be paid', async () => {
      const l = live();
      const created = await payin(l, 'onsite');
      await l.setu.pay(created.payment_id, { status: 'failed' });
      await new Promise((r) => setTimeout(r, 200));
      assert.equal((await l.status('payin', created.payment_id)).status, 'PENDING');
      const paid = await l.setu.pay(created.payment_id);
      assert.equal((await l.waitStatus('payin', created.payment_id, 'SUCCESS')).utr, paid.rrn);
    });

    it('refuses a bad or missing signature with 401 SIGNATURE_INVALID and stores nothing', async () => {
      const l = live();
      const created = await payin(l, 'onsite');
      const qr = l.setu.qrFor(created.payment_id)!;
      const fake = {
        id: 'x',
        rrn: '123456789012',
        amount: qr.amount,
        txnId: 't',
        qrId: qr.id,
        status: 'success',
        customerVpa: 'a@b',
        txnTs: '',
      } as const;
      const raw = JSON.stringify(l.setu.event('payment.success', qr, fake));
      const before = await eventCount(l);
      assert.equal(await l.setu.send(raw, fakeSetuSignature(raw, 'not-the-secret')), 401);
      assert.equal(await l.setu.send(raw, ''), 401);
      const res = await fetch(l.setu.notifyUrl, {
        method: 'POST',
        body: raw,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.error_code, 'SIGNATURE_INVALID');
      assert.equal(await eventCount(l), before);
      assert.equal((await l.status('payin', created.payment_id)).status, 'PENDING');
    });

    it('stores a verified notification that is not a JSON object and answers 200, changing nothing', async () => {
      const l = live();
      const before = await eventCount(l);
      assert.equal(await l.setu.send('not json at all'), 200);
      assert.equal(await eventCount(l), before + 1);
      const [row] = await l.gw.database.db
        .selectFrom('channel_events')
        .select(['type', 'state', 'payment_id'])
        .orderBy('id', 'desc')
        .limit(1)
        .execute();
      assert.deepEqual(row, { type: 'unknown', state: 'applied', payment_id: null });
    });

    it('answers 200 to a notification for an unknown reference and keeps it as an exception', async () => {
      const l = live();
      const created = await payin(l, 'onsite');
      const qr = { ...l.setu.qrFor(created.payment_id)!, referenceId: 'NoSuchPaymentIdAtAllInThisGatewy' };
      const payment = {
        id: 'pay-unknown-1',
        qrId: qr.id,
        amount: qr.amount,
        status: 'success',
        rrn: '111122223333',
        txnId: 'tx',
        customerVpa: 'c@d',
        txnTs: '',
      } as const;
      assert.equal(await l.setu.notify('payment.success', qr, payment), 200);
      const all = await l.exceptions();
      assert.ok(all.some((e) => e.kind === 'unknown_reference' && e.reference === 'pay-unknown-1'));
    });

    it('answers 503 CHANNEL_UNAVAILABLE when Setu fails or times out, leaves nothing behind, and a retry of the order works', async () => {
      const l = live();
      const orderNo = order('down');
      const body = { money: { amount: 10 }, merchant_order_no: orderNo };
      for (const fault of [{ status: 500 }, { delayMs: 1500 }, 'reset'] as const) {
        l.setu.fail('dqr_create', fault);
        const res = await l.post('/payments/onsite/payin', body);
        assert.equal(res.status, 503, res.text);
        assert.equal(res.body.error.error_code, 'CHANNEL_UNAVAILABLE');
        assert.ok(Number(res.headers['retry-after']) > 0);
        const rows = await l.gw.database.db
          .selectFrom('transactions')
          .select('payment_id')
          .where('merchant_order_no', '=', orderNo)
          .execute();
        assert.deepEqual(rows, []);
      }
      const ok = await l.post('/payments/onsite/payin', body);
      assert.equal(ok.status, 200, ok.text);
      assert.equal(l.receiver.received.filter((r) => r.body?.merchant_order_no === orderNo).length, 0);
    });

    it('answers 400 CHANNEL_REJECTED with the provider code when Setu refuses the request', async () => {
      const l = live();
      l.setu.fail('dqr_create', { status: 400, body: { code: 'invalid-merchant-vpa', detail: 'no' } });
      const res = await l.post('/payments/onsite/payin', {
        money: { amount: 10 },
        merchant_order_no: order('rej'),
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.error_code, 'CHANNEL_REJECTED');
      assert.equal(res.body.error.metadata.provider_code, 'invalid-merchant-vpa');
    });

    it('logs in once for many calls, and again once when the token has expired (401)', async () => {
      const l = live();
      const first = l.setu.logins;
      await Promise.all(Array.from({ length: 5 }, () => payin(l, 'onsite')));
      assert.ok(l.setu.logins - first <= 1, 'five calls with a live token log in at most once');
      const logins = l.setu.logins;
      l.setu.expireTokens();
      await Promise.all(Array.from({ length: 5 }, () => payin(l, 'onsite')));
      assert.equal(l.setu.logins - logins, 1, 'one login for five calls refused with 401');
    });

    it('refuses a live amount outside [1.00, LIVE_MAX_PAYIN] with AMOUNT_OUT_OF_RANGE', async () => {
      const l = live();
      for (const amount of [0.99, 100000.01]) {
        const res = await l.post('/payments/onsite/payin', {
          money: { amount },
          merchant_order_no: order('range'),
        });
        assert.equal(res.status, 400);
        assert.equal(res.body.error.error_code, 'AMOUNT_OUT_OF_RANGE');
        assert.deepEqual([res.body.error.metadata.min, res.body.error.metadata.max], [1, 100000]);
      }
    });
  });

  describe(`live pay-ins at expiry and by polling on ${kind}`, () => {
    const live = useLive(kind, { PAYIN_EXPIRY_S: '2', CHANNEL_POLL_MS: '300' });
    afterEach(async () => live().ledgerOk());

    it('closes the QR at expiry and fails the pay-in; a payment coming later is an exception', async () => {
      const l = live();
      const created = await payin(l, 'onsite');
      await l.waitStatus('payin', created.payment_id, 'FAILED', 8000);
      const qr = l.setu.qrFor(created.payment_id)!;
      assert.equal(qr.status, 'closed');
      assert.ok(l.setu.count('dqr_expire') >= 1);
      qr.status = 'active';
      const late = await l.setu.pay(created.payment_id);
      await until(
        async () => (await l.exceptions(created.payment_id)).length === 1,
        'the late payment exception',
      );
      assert.deepEqual(await l.exceptions(created.payment_id), [
        { kind: 'payment_after_final', payment_id: created.payment_id, reference: late.id },
      ]);
      assert.equal((await l.status('payin', created.payment_id)).status, 'FAILED');
    });

    it('finds a payment without a notification by polling: SUCCESS with the rrn', async () => {
      const l = live();
      const created = await payin(l, 'offsite');
      const paid = await l.setu.pay(created.payment_id, { notify: false });
      const done = await l.waitStatus('payin', created.payment_id, 'SUCCESS', 5000);
      assert.equal(done.utr, paid.rrn);
      assert.ok(l.setu.count('payment_last') >= 1);
    });

    it('asks Setu at expiry, after polls that failed, and a payment found then wins', async () => {
      const l = live();
      const created = await payin(l, 'onsite');
      // Paid, without a notification, and polls fail until expiry.
      l.setu.fail('payment_last', { status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
      const paid = await l.setu.pay(created.payment_id, { notify: false, keepActive: true });
      const done = await l.waitStatus('payin', created.payment_id, 'SUCCESS', 8000);
      assert.equal(done.utr, paid.rrn);
    });
  });

  describe(`live payouts through Cashfree on ${kind}`, () => {
    const live = useLive(kind);
    afterEach(async () => {
      live().cashfree.ending = 'SUCCESS';
      live().cashfree.webhooks = true;
      live().cashfree.endAfterMs = 0;
      await live().ledgerOk();
    });

    it('sends one transfer and settles SUCCESS by its webhook: utr = transfer_utr, one callback', async () => {
      const l = live();
      const before = await l.balance();
      const created = await payout(l, 1200.75, 'Asha Rao-Menon (Jr.)');
      const done = await l.waitStatus('payout', created.payment_id, 'SUCCESS');
      const t = l.cashfree.transfers.get(created.payment_id)!;
      assert.equal(done.utr, t.transfer_utr);
      assert.equal(l.cashfree.created.get(created.payment_id), 1);
      assert.equal(t.transfer_amount, 1200.75);
      assert.equal(t.beneficiary_name, 'Asha RaoMenon Jr');
      const after = await l.balance();
      assert.equal(before.available - after.available, 120075);
      assert.equal(after.held, before.held);
      await l.receiver.waitFor(() => l.receiver.forPayment(created.payment_id).length === 1, 'the callback');
      const row = await l.gw.database.db
        .selectFrom('transactions')
        .select(['channel_txn_id', 'receiver_name'])
        .where('payment_id', '=', created.payment_id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { channel_txn_id: t.cf_transfer_id, receiver_name: 'Asha Rao-Menon (Jr.)' });
    });

    it('fails a payout by TRANSFER_FAILED and returns the hold to available', async () => {
      const l = live();
      l.cashfree.ending = 'FAILED';
      const before = await l.balance();
      const created = await payout(l, 300);
      await l.waitStatus('payout', created.payment_id, 'FAILED');
      assert.deepEqual(await l.balance(), before);
    });

    it('fails a payout Cashfree refuses at once (4xx) and releases the hold, without retrying it', async () => {
      const l = live();
      l.cashfree.fail('transfer_create', {
        status: 400,
        body: {
          type: 'invalid_request_error',
          code: 'beneficiary_details.beneficiary_instrument_details.bank_ifsc_invalid',
          message: 'bank_ifsc should be in standard ifsc format',
        },
      });
      const before = await l.balance();
      const created = await payout(l, 45);
      await l.waitStatus('payout', created.payment_id, 'FAILED');
      assert.deepEqual(await l.balance(), before);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(l.cashfree.requests.filter((r) => r.body?.transfer_id === created.payment_id).length, 1);
    });

    for (const [what, fault] of [
      ['a reset connection', 'reset'],
      ['a timeout', { delayMs: 1500 }],
    ] as const) {
      it(`reads the transfer back after ${what} and never sends it twice`, async () => {
        const l = live();
        l.cashfree.fail('transfer_create', fault);
        // The transfer ends after the worker has read it back (its first retry comes after 1 s).
        l.cashfree.endAfterMs = 2500;
        const created = await payout(l, 77);
        await l.waitStatus('payout', created.payment_id, 'SUCCESS', 15_000);
        assert.equal(l.cashfree.created.get(created.payment_id), 1);
        const posts = l.cashfree.requests.filter(
          (r) => r.method === 'POST' && r.body?.transfer_id === created.payment_id,
        );
        assert.equal(posts.length, 1, 'the transfer was sent once');
        assert.ok(
          l.cashfree.requests.some(
            (r) => r.method === 'GET' && r.query.get('transfer_id') === created.payment_id,
          ),
        );
      });
    }

    it('returns a reversed payout to available: status stays SUCCESS, one callback, the reversal listed', async () => {
      const l = live();
      const before = await l.balance();
      const created = await payout(l, 640);
      await l.waitStatus('payout', created.payment_id, 'SUCCESS');
      await l.cashfree.end(created.payment_id, 'REVERSED');
      await until(async () => (await l.balance()).available === before.available, 'the reversal');
      assert.equal((await l.status('payout', created.payment_id)).status, 'SUCCESS');
      assert.deepEqual(
        (await l.exceptions(created.payment_id)).map((e) => e.kind),
        ['reversal'],
      );
      // A repeat of the reversal webhook changes nothing.
      const t = l.cashfree.transfers.get(created.payment_id)!;
      assert.equal(
        await l.cashfree.webhook('TRANSFER_REVERSED', t, {
          body: JSON.stringify({ ...l.cashfree.webhookBody('TRANSFER_REVERSED', t), event_time: 'again' }),
        }),
        200,
      );
      assert.equal((await l.balance()).available, before.available);
      // The merchant is told twice: SUCCESS, then REVERSED (signed over payment_id:amount:REVERSED).
      await l.receiver.waitFor(() => l.receiver.forPayment(created.payment_id).length === 2, 'the callbacks');
      await new Promise((r) => setTimeout(r, 200));
      const told = l.receiver.forPayment(created.payment_id);
      assert.deepEqual(
        told.map((c) => c.body.status),
        ['SUCCESS', 'REVERSED'],
      );
      const view = await l.status('payout', created.payment_id);
      assert.equal(view.status, 'SUCCESS');
      assert.equal(view.reversed, true);
    });

    it('settles once when the webhook comes before PROCESSING is recorded', async () => {
      const l = live();
      const created = await Promise.all(Array.from({ length: 20 }, () => payout(l, 5)));
      for (const c of created) await l.waitStatus('payout', c.payment_id, 'SUCCESS');
      for (const c of created) assert.equal(l.cashfree.created.get(c.payment_id), 1);
      const events = await l.gw.database.db
        .selectFrom('transaction_events')
        .select(['payment_id'])
        .where(
          'payment_id',
          'in',
          created.map((c) => c.payment_id),
        )
        .where('status', '=', 'SUCCESS')
        .execute();
      assert.equal(events.length, 20);
    });

    it('refuses a webhook with a bad signature or a timestamp 6 minutes ahead (401) and changes nothing', async () => {
      const l = live();
      l.cashfree.ending = 'never';
      const created = await payout(l, 9);
      await l.waitStatus('payout', created.payment_id, 'PROCESSING');
      const t = l.cashfree.transfers.get(created.payment_id)!;
      t.status = 'SUCCESS';
      t.transfer_utr = '999988887777';
      assert.equal(await l.cashfree.webhook('TRANSFER_SUCCESS', t, { signature: 'AAAA' }), 401);
      assert.equal(
        await l.cashfree.webhook('TRANSFER_SUCCESS', t, { timestamp: String(Date.now() + 6 * 60_000) }),
        401,
      );
      assert.equal((await l.status('payout', created.payment_id)).status, 'PROCESSING');
      assert.equal(await l.cashfree.webhook('TRANSFER_SUCCESS', t), 200);
      assert.equal((await l.waitStatus('payout', created.payment_id, 'SUCCESS')).utr, '999988887777');
    });

    it('refuses a live payout outside [1.00, LIVE_MAX_PAYOUT] with AMOUNT_OUT_OF_RANGE', async () => {
      const l = live();
      const res = await l.post('/payments/payout', {
        money: { amount: 500000.01 },
        merchant_order_no: order('big'),
        receiver: RECEIVER,
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.error_code, 'AMOUNT_OUT_OF_RANGE');
      assert.deepEqual([res.body.error.metadata.min, res.body.error.metadata.max], [1, 500000]);
    });

    it('counts channel requests by operation and outcome, and exceptions by kind, in /metrics', async () => {
      const l = live();
      // Its own request and its own exception: what other tests did is not counted on.
      const created = await payout(l, 3);
      await l.waitStatus('payout', created.payment_id, 'SUCCESS');
      const t = { ...l.cashfree.transfers.get(created.payment_id)!, transfer_id: 'NoSuchPayoutHere' };
      assert.equal(await l.cashfree.webhook('TRANSFER_SUCCESS', t), 200);
      const text = await fetch(`${l.gw.baseUrl}/metrics`).then((r) => r.text());
      assert.match(
        text,
        /paygate_channel_requests_total\{channel="cashfree",operation="transfer_create",outcome="ok"\} \d+/,
      );
      assert.match(
        text,
        /paygate_channel_request_duration_seconds_bucket\{le="0\.05",channel="cashfree",operation="transfer_create"\}/,
      );
      assert.match(text, /paygate_channel_exceptions\{kind="unknown_reference"\} [1-9]/);
    });
  });

  describe(`live payouts by polling on ${kind}`, () => {
    const live = useLive(kind, { CHANNEL_POLL_MS: '200' });
    afterEach(async () => live().ledgerOk());

    it('settles a payout whose webhook never comes by asking Cashfree', async () => {
      const l = live();
      l.cashfree.webhooks = false;
      l.cashfree.endAfterMs = 300;
      const created = await payout(l, 33);
      const done = await l.waitStatus('payout', created.payment_id, 'SUCCESS', 8000);
      assert.equal(done.utr, l.cashfree.transfers.get(created.payment_id)!.transfer_utr);
      assert.equal(l.cashfree.webhookStatuses.length, 0);
    });

    it('fails a payout when polling finds it REVERSED with no SUCCESS recorded, and releases the hold', async () => {
      const l = live();
      l.cashfree.webhooks = false;
      l.cashfree.ending = 'REVERSED';
      l.cashfree.endAfterMs = 100;
      const before = await l.balance();
      const created = await payout(l, 21);
      const done = await l.waitStatus('payout', created.payment_id, 'FAILED', 8000);
      assert.equal(done.utr, '');
      assert.deepEqual(await l.balance(), before);
      await l.receiver.waitFor(() => l.receiver.forPayment(created.payment_id).length === 1, 'the callback');
      assert.equal(l.receiver.forPayment(created.payment_id)[0]!.body.status, 'FAILED');
    });

    it('lists a live transaction not final after CHANNEL_STUCK_AFTER_S as stuck', async () => {
      const l = live();
      l.cashfree.ending = 'never';
      const created = await payout(l, 2);
      // Its age is read from created_at: move it back a day.
      await l.gw.database.db
        .updateTable('transactions')
        .set({ created_at: Date.now() - 86_400_001 })
        .where('payment_id', '=', created.payment_id)
        .execute();
      await until(
        async () => (await l.exceptions(created.payment_id)).some((e) => e.kind === 'stuck'),
        'the stuck exception',
        8000,
      );
    });
  });
});
