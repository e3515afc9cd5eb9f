/**
 * Live pay-ins made production-safe, on both databases, with Setu's published document between
 * Paygate and the fake Setu (every read, close and creation checked by the spec proxy): a payment
 * in progress at expiry keeps the pay-in PENDING until it is final (or CHANNEL_STUCK_AFTER_S
 * passes); a QR that could not be closed is closed before the pay-in is FAILED; a notification
 * must match the pay-in's QR and UPI id; a second payment and an unreadable amount are exceptions.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { FakeCashfree } from '../support/fake-cashfree.ts';
import { FakeSetu } from '../support/fake-setu.ts';
import { onEachDatabase } from '../support/harness.ts';
import { LIVE_VPA, until, useLive, type LiveGateway } from '../support/live.ts';
import { SETU_SPEC, type SpecProxy, useSpecProxy } from '../support/spec-proxy.ts';

let n = 0;
async function payin(l: LiveGateway, amount = 120) {
  const res = await l.post('/payments/onsite/payin', {
    money: { amount },
    merchant_order_no: `lp-${process.pid}-${++n}`,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.payment_id as string;
}

const pageOf = (l: LiveGateway, id: string) => fetch(`${l.gw.baseUrl}/pay/${id}`).then((r) => r.text());

const exceptionRow = (l: LiveGateway, id: string) =>
  l.gw.database.db
    .selectFrom('channel_exceptions')
    .select(['kind', 'amount', 'amount_text', 'detail', 'reference'])
    .where('payment_id', '=', id)
    .execute();

const setuDocument = useSpecProxy(SETU_SPEC);

await onEachDatabase('live pay-ins against the fake Setu behind its document', (kind) => {
  let setu: FakeSetu;
  let cashfree: FakeCashfree;
  let proxy: SpecProxy;

  before(async () => {
    setu = await new FakeSetu().start();
    cashfree = await new FakeCashfree().start();
    proxy = await setuDocument.route(setu.url);
  });

  after(async () => {
    await setu?.stop();
    await cashfree?.stop();
  });

  describe(`pay-ins on ${kind}`, () => {
    const shared = () => ({ fakes: { setu, cashfree }, proxies: { setu: proxy.url } });
    const env = { PAYIN_EXPIRY_S: '2', CHANNEL_POLL_MS: '300', CHANNEL_TIMEOUT_MS: '5000' };
    const live = useLive(kind, env, shared);
    afterEach(async () => live().ledgerOk());

    it('keeps a pay-in whose payment is in progress at expiry PENDING ("Payment in progress"), then SUCCESS', async () => {
      const l = live();
      const id = await payin(l);
      const payment = await setu.pay(id, { status: 'pending' });
      // Well past expiry and several polls later, it waits for the bank.
      await new Promise((r) => setTimeout(r, 3500));
      assert.equal((await l.status('payin', id)).status, 'PENDING');
      assert.equal(setu.qrFor(id)!.status, 'active', 'the QR is not closed under a payment in progress');
      const page = await pageOf(l, id);
      assert.ok(page.includes('Payment in progress'), 'the page says the payment is in progress');
      assert.ok(!page.includes('Payment request expired'));
      await setu.finish(payment, 'success');
      assert.equal((await l.waitStatus('payin', id, 'SUCCESS')).utr, payment.rrn);
      assert.deepEqual(await exceptionRow(l, id), []);
    });

    it('finds the end of a payment in progress by polling, without a notification', async () => {
      const l = live();
      const id = await payin(l);
      const payment = await setu.pay(id, { status: 'pending' });
      await new Promise((r) => setTimeout(r, 2500));
      assert.equal((await l.status('payin', id)).status, 'PENDING');
      await setu.finish(payment, 'success', false);
      assert.equal((await l.waitStatus('payin', id, 'SUCCESS', 8000)).utr, payment.rrn);
    });

    it('closes the QR and fails the pay-in once the payment in progress fails', async () => {
      const l = live();
      const id = await payin(l);
      const payment = await setu.pay(id, { status: 'pending' });
      await new Promise((r) => setTimeout(r, 2500));
      assert.equal((await l.status('payin', id)).status, 'PENDING');
      await setu.finish(payment, 'failed');
      await l.waitStatus('payin', id, 'FAILED', 8000);
      assert.equal(setu.qrFor(id)!.status, 'closed');
      await l.receiver.waitFor(() => l.receiver.forPayment(id).length === 1, 'the callback');
      assert.equal(l.receiver.forPayment(id)[0]!.body.status, 'FAILED');
    });

    it('retries a close that fails with 500 and fails the pay-in only after the close', async () => {
      const l = live();
      const id = await payin(l);
      setu.fail('dqr_expire', { status: 500, body: { code: 'internal-error', detail: 'down' } });
      setu.fail('dqr_expire', { status: 500, body: { code: 'internal-error', detail: 'down' } });
      const closes = setu.count('dqr_expire');
      await until(() => setu.count('dqr_expire') > closes, 'the first close', 8000);
      assert.equal((await l.status('payin', id)).status, 'PENDING', 'not FAILED after a failed close');
      assert.equal(setu.qrFor(id)!.status, 'active');
      await l.waitStatus('payin', id, 'FAILED', 10_000);
      assert.equal(setu.qrFor(id)!.status, 'closed');
      assert.ok(setu.count('dqr_expire') - closes >= 3, 'closed on the third try');
    });

    it('keeps a second, different payment on a SUCCESS pay-in as an exception', async () => {
      const l = live();
      const id = await payin(l);
      const first = await setu.pay(id);
      await l.waitStatus('payin', id, 'SUCCESS');
      setu.qrFor(id)!.status = 'active';
      const second = await setu.pay(id);
      await until(async () => (await exceptionRow(l, id)).length === 1, 'the exception');
      const [e] = await exceptionRow(l, id);
      assert.equal(e!.kind, 'payment_after_final');
      assert.equal(e!.reference, second.id);
      assert.equal(Number(e!.amount), 12000);
      const status = await l.status('payin', id);
      assert.deepEqual([status.status, status.utr], ['SUCCESS', first.rrn]);
    });

    it('settles only a notification that names the pay-in, its QR and its UPI id; others are unknown_reference', async () => {
      const l = live();
      const id = await payin(l);
      const qr = setu.qrFor(id)!;
      // In progress at the fake until the good notification: the worker's polls (every 300 ms) must
      // not settle the pay-in while the wrong notifications are sent.
      const payment = await setu.pay(id, { status: 'pending', notify: false });
      const good = setu.event('payment.success', qr, payment);
      const { productInstanceId: _qr, ...noQr } = good;
      const wrongs = [
        { ...noQr, eventId: 'no-qr', id: 'pay-no-qr' },
        {
          ...good,
          eventId: 'other-qr',
          id: 'pay-other-qr',
          productInstanceId: '01JD3Q2W1A7B9C3D5E7F9G1H3J',
        },
        { ...good, eventId: 'other-vpa', id: 'pay-other-vpa', merchantVpa: 'someone.else@pineaxis' },
        { ...noQr, eventId: 'no-vpa', id: 'pay-no-vpa', merchantVpa: undefined },
      ];
      for (const body of wrongs) assert.equal(await setu.send(JSON.stringify(body)), 200);
      await until(async () => {
        const all = await l.exceptions();
        return wrongs.every((w) => all.some((e) => e.kind === 'unknown_reference' && e.reference === w.id));
      }, 'four unknown_reference exceptions');
      assert.equal((await l.status('payin', id)).status, 'PENDING');
      assert.equal(l.receiver.forPayment(id).length, 0);
      // The same payment with everything that names it settles it.
      assert.equal(good.merchantVpa, LIVE_VPA);
      await setu.finish(payment, 'success', false);
      assert.equal(await setu.send(JSON.stringify(good)), 200);
      assert.equal((await l.waitStatus('payin', id, 'SUCCESS')).utr, payment.rrn);
    });

    it('keeps an amount that cannot be read as "unreadable" with the text Setu sent, not as -0.01', async () => {
      const l = live();
      const id = await payin(l);
      const qr = setu.qrFor(id)!;
      const payment = await setu.pay(id, { notify: false, keepActive: true });
      const body = { ...setu.event('payment.success', qr, payment), amount: 12000.5 };
      assert.equal(await setu.send(JSON.stringify(body)), 200);
      await until(async () => (await exceptionRow(l, id)).length === 1, 'the exception');
      const [e] = await exceptionRow(l, id);
      assert.equal(e!.kind, 'amount_mismatch');
      assert.equal(e!.amount, null);
      assert.equal(e!.amount_text, '12000.5');
      assert.match(e!.detail, /unreadable amount \(12000\.5\)/);
      assert.equal((await l.status('payin', id)).status, 'PENDING');
    });
    it("registers a live merchant's UPI id with Setu, or refuses the merchant with VPA_NOT_ROUTABLE", async () => {
      const l = live();
      const merchants = l.gw.paygate.services.merchants;
      const named = async (vpa: string) =>
        (await l.gw.database.db.selectFrom('merchants').select('id').where('vpa', '=', vpa).execute()).length;
      const refusal = async (input: { vpa: string; setuVpaId?: string }, code = 'VPA_NOT_ROUTABLE') => {
        await assert.rejects(merchants.create({ name: 'Refused Shop', live: true, ...input }), (err: any) => {
          assert.equal(err.errorCode, code, err.message);
          assert.ok(err.message.includes(input.vpa));
          return true;
        });
        assert.equal(await named(input.vpa), 0, 'no merchant was created');
      };

      const fresh = `fresh.${kind}@pineaxis`;
      await merchants.create({ name: 'Fresh Shop', live: true, vpa: fresh });
      assert.equal([...setu.vpas.values()].find((v) => v.vpa === fresh)?.status, 'active');
      assert.equal(await named(fresh), 1);

      const taken = `taken.${kind}@pineaxis`;
      setu.takenVpas.add(taken);
      await refusal({ vpa: taken });

      const held = setu.holdVpa(`held.${kind}@pineaxis`);
      await refusal({ vpa: held.vpa });
      await refusal({ vpa: held.vpa, setuVpaId: '01JD3Q2W1A7B9C3D5E7F9G1H3J' });
      await refusal({ vpa: `other.${kind}@pineaxis`, setuVpaId: held.id });
      const inactive = setu.holdVpa(`inactive.${kind}@pineaxis`, 'inactive');
      await refusal({ vpa: inactive.vpa, setuVpaId: inactive.id });
      await merchants.create({ name: 'Held Shop', live: true, vpa: held.vpa, setuVpaId: held.id });
      assert.equal(await named(held.vpa), 1);

      setu.fail('vpa_availability', { status: 500, body: { code: 'internal-error', detail: 'down' } });
      await refusal({ vpa: `later.${kind}@pineaxis` }, 'CHANNEL_UNAVAILABLE');
    });
  });

  describe(`a payment in progress past CHANNEL_STUCK_AFTER_S on ${kind}`, () => {
    const live = useLive(
      kind,
      {
        PAYIN_EXPIRY_S: '2',
        CHANNEL_POLL_MS: '300',
        CHANNEL_TIMEOUT_MS: '5000',
        CHANNEL_STUCK_AFTER_S: '4',
      },
      () => ({ fakes: { setu, cashfree }, proxies: { setu: proxy.url } }),
    );
    afterEach(async () => live().ledgerOk());

    it('fails the pay-in with a stuck exception, after closing its QR', async () => {
      const l = live();
      const id = await payin(l);
      await setu.pay(id, { status: 'pending' });
      await new Promise((r) => setTimeout(r, 2500));
      assert.equal((await l.status('payin', id)).status, 'PENDING');
      await l.waitStatus('payin', id, 'FAILED', 10_000);
      assert.equal(setu.qrFor(id)!.status, 'closed');
      assert.deepEqual(
        (await exceptionRow(l, id)).map((e) => e.kind),
        ['stuck'],
      );
    });
  });

  it('reports zero violations of the document', () => {
    assert.deepEqual(proxy.violations(), []);
    assert.ok(proxy.output().includes('Forwarding "get" request'), 'reads went through the proxy');
    assert.ok(proxy.output().includes('Forwarding "put" request'), 'closes went through the proxy');
  });
});
