/**
 * Live payouts made production-safe, on both databases, with Paygate's calls to the fake Cashfree
 * going through the spec proxy (Cashfree's published document checks every request and answer):
 * every Cashfree status has its meaning, a SUCCESS or REVERSED after FAILED is kept and journaled,
 * an amount that does not fit is an exception polled with backoff, a payout is FAILED only on
 * Cashfree's word, a refusal of the account (403, 2FA) keeps payouts PENDING, and a duplicate
 * transfer is never sent. The fake takes duplicate transfer_ids as new transfers, so "one transfer
 * per payout" is counted on the POSTs it received, not on its de-duplication.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { FakeCashfree } from '../support/fake-cashfree.ts';
import { FakeSetu } from '../support/fake-setu.ts';
import { onEachDatabase } from '../support/harness.ts';
import { until, useLive, type LiveGateway } from '../support/live.ts';
import { CASHFREE_SPEC, type SpecProxy, useSpecProxy } from '../support/spec-proxy.ts';
import { ledgerOf, payout, posts, reads } from '../support/live-payouts.ts';

const POLL_MS = 400;

const cashfreeDocument = useSpecProxy(CASHFREE_SPEC);

await onEachDatabase('live payouts through the Cashfree document', (kind) => {
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

  describe(`payouts on ${kind}`, () => {
    const live = useLive(kind, { CHANNEL_POLL_MS: String(POLL_MS), CHANNEL_TIMEOUT_MS: '1000' }, () => ({
      fakes: { setu, cashfree },
      proxies: { cashfree: proxy.url },
    }));
    afterEach(async () => {
      Object.assign(cashfree, {
        ending: 'SUCCESS',
        webhooks: true,
        endAfterMs: 0,
        syncAnswer: false,
        readLagMs: 0,
        accountRefusal: null,
        require2fa: false,
        reportedAmountDelta: 0,
      });
      cashfree.acceptDuplicates = true;
      await live().ledgerOk();
    });
    before(() => {
      cashfree.acceptDuplicates = true;
    });

    /** A payout the fake has taken and keeps open (PROCESSING), for scripted events. */
    async function open(l: LiveGateway, amount: number): Promise<string> {
      cashfree.ending = 'never';
      const id = await payout(l, amount);
      await l.waitStatus('payout', id, 'PROCESSING');
      return id;
    }

    it('item 1: a SUCCESS after FAILED changes no status, opens an exception and journals the amount as owed (once)', async () => {
      const l = live();
      const before = await l.balance();
      const id = await open(l, 150.25);
      assert.deepEqual(await cashfree.events(id, ['TRANSFER_FAILED', 'TRANSFER_SUCCESS']), [200, 200]);
      await l.waitStatus('payout', id, 'FAILED');
      await until(async () => (await l.exceptions(id)).length === 1, 'the exception');
      assert.deepEqual(await l.balance(), before);
      assert.deepEqual(
        (await l.exceptions(id)).map((e) => e.kind),
        ['payout_after_failed'],
      );
      assert.deepEqual(await ledgerOf(l, id), {
        'external:bank_payouts': 15025,
        'external:receivable': -15025,
      });
      // The same SUCCESS again (a new event) journals nothing more.
      await cashfree.events(id, ['TRANSFER_SUCCESS']);
      assert.equal((await l.exceptions(id)).length, 1);
      assert.deepEqual((await ledgerOf(l, id))['external:receivable'], -15025);
      // Then the bank sends it back: the debt is cancelled, and the operator sees that too.
      await cashfree.events(id, ['TRANSFER_REVERSED']);
      await until(async () => (await l.exceptions(id)).length === 2, 'the reversal exception');
      assert.deepEqual(await ledgerOf(l, id), { 'external:bank_payouts': 0, 'external:receivable': 0 });
      assert.equal((await l.status('payout', id)).status, 'FAILED');
    });

    it('item 1: a REVERSED after FAILED moves nothing; a REVERSED that failed the payout stops a later SUCCESS from journaling', async () => {
      const l = live();
      const before = await l.balance();
      const a = await open(l, 12);
      await cashfree.events(a, ['TRANSFER_FAILED', 'TRANSFER_REVERSED']);
      await until(async () => (await l.exceptions(a)).length === 1, 'the exception');
      assert.deepEqual(
        (await l.exceptions(a)).map((e) => e.kind),
        ['reversal_after_failed'],
      );
      assert.deepEqual(await ledgerOf(l, a), {});
      const b = await open(l, 13);
      await cashfree.events(b, ['TRANSFER_REVERSED', 'TRANSFER_SUCCESS']);
      await until(async () => (await l.exceptions(b)).length === 1, 'the exception');
      assert.equal((await l.status('payout', b)).status, 'FAILED');
      assert.deepEqual(await ledgerOf(l, b), {});
      assert.deepEqual(await l.balance(), before);
    });

    it('item 2: REVERSED with no SUCCESS is FAILED (utr "", a FAILED callback); MANUALLY_REJECTED is final; ACKNOWLEDGED is SUCCESS', async () => {
      const l = live();
      const before = await l.balance();
      const reversed = await open(l, 21);
      await cashfree.events(reversed, ['TRANSFER_REVERSED']);
      const r = await l.waitStatus('payout', reversed, 'FAILED');
      assert.equal(r.utr, '');
      const rejected = await open(l, 22);
      await cashfree.events(rejected, ['TRANSFER_MANUALLY_REJECTED']);
      await l.waitStatus('payout', rejected, 'FAILED');
      assert.deepEqual(await l.balance(), before);
      const acknowledged = await open(l, 23);
      await cashfree.events(acknowledged, ['TRANSFER_ACKNOWLEDGED']);
      const done = await l.waitStatus('payout', acknowledged, 'SUCCESS');
      assert.equal(done.utr, cashfree.transfers.get(acknowledged)!.transfer_utr);
      for (const [id, status] of [
        [reversed, 'FAILED'],
        [rejected, 'FAILED'],
        [acknowledged, 'SUCCESS'],
      ] as const) {
        await l.receiver.waitFor(() => l.receiver.forPayment(id).length === 1, 'the callback');
        assert.equal(l.receiver.forPayment(id)[0]!.body.status, status);
      }
    });

    it('item 2: a MANUALLY_REJECTED read by polling is final too', async () => {
      const l = live();
      cashfree.webhooks = false;
      const id = await open(l, 24);
      cashfree.transfers.get(id)!.status = 'MANUALLY_REJECTED';
      await l.waitStatus('payout', id, 'FAILED', 8000);
    });

    it('item 4: a SUCCESS of another amount, by webhook or by polling, settles nothing and is an exception', async () => {
      const l = live();
      const hooked = await open(l, 40);
      cashfree.reportedAmountDelta = 0.01;
      await cashfree.events(hooked, ['TRANSFER_SUCCESS']);
      await until(async () => (await l.exceptions(hooked)).length === 1, 'the exception');
      assert.equal((await l.status('payout', hooked)).status, 'PROCESSING');
      cashfree.webhooks = false;
      const polled = await open(l, 41);
      cashfree.transfers.get(polled)!.status = 'SUCCESS';
      await until(async () => (await l.exceptions(polled)).length === 1, 'the exception', 8000);
      assert.deepEqual(
        [...(await l.exceptions(hooked)), ...(await l.exceptions(polled))].map((e) => e.kind),
        ['amount_mismatch', 'amount_mismatch'],
      );
      assert.equal((await l.status('payout', polled)).status, 'PROCESSING');
      // Settled by hand for the ledger check: the amounts agree again.
      cashfree.reportedAmountDelta = 0;
      await cashfree.events(hooked, ['TRANSFER_SUCCESS']);
      await l.waitStatus('payout', hooked, 'SUCCESS');
      await l.waitStatus('payout', polled, 'SUCCESS', 8000);
    });

    it('item 5: a first answer final for another amount leaves the payout PROCESSING, read with backoff', async () => {
      const l = live();
      cashfree.syncAnswer = true;
      cashfree.webhooks = false;
      cashfree.reportedAmountDelta = 1;
      const id = await payout(l, 55);
      await l.waitStatus('payout', id, 'PROCESSING', 5000);
      await new Promise((r) => setTimeout(r, 4 * POLL_MS + 1500));
      const at = reads(cashfree, id).map((r) => r.at);
      assert.ok(at.length >= 2, `read ${at.length} times`);
      const gaps = at.slice(1).map((t, i) => t - at[i]!);
      for (const [i, gap] of gaps.entries()) {
        assert.ok(gap >= POLL_MS - 50, `gap ${i} is ${gap} ms`);
        if (i > 0) assert.ok(gap >= gaps[i - 1]! - 50, `gaps grow: ${gaps.join(', ')}`);
      }
      assert.equal((await l.exceptions(id)).length, 1);
      assert.equal(posts(cashfree, id).length, 1);
      cashfree.reportedAmountDelta = 0;
      await l.waitStatus('payout', id, 'SUCCESS', 8000);
    });

    it('item 6: sends again only after two not-found reads CHANNEL_POLL_MS apart, and a refusal of the resend is not FAILED', async () => {
      const l = live();
      cashfree.fail(
        'transfer_create',
        { status: 500 },
        {
          status: 400,
          body: {
            type: 'invalid_request_error',
            code: 'beneficiary_details.beneficiary_instrument_details.bank_ifsc_invalid',
            message: 'bank_ifsc should be in standard ifsc format',
          },
        },
      );
      const id = await payout(l, 67);
      await l.waitStatus('payout', id, 'SUCCESS', 20_000);
      const calls = cashfree.requests.filter(
        (r) => r.body?.transfer_id === id || r.query.get('transfer_id') === id,
      );
      assert.equal(posts(cashfree, id).length, 3);
      assert.equal(cashfree.created.get(id), 1);
      // Before each send after the first: two reads answered 404, at least CHANNEL_POLL_MS apart.
      for (const [i, call] of calls.entries()) {
        if (call.method !== 'POST' || i === 0) continue;
        const [second, first] = calls
          .slice(0, i)
          .reverse()
          .filter((c) => c.method === 'GET');
        assert.equal(first?.answered, 404);
        assert.equal(second?.answered, 404);
        assert.ok(second!.at - first!.at >= POLL_MS - 20, `reads ${second!.at - first!.at} ms apart`);
        assert.ok(calls.slice(0, i).filter((c) => c.method === 'GET').length >= 2);
      }
    });

    it('item 7: a 403 keeps payouts PENDING with their holds and one channel_account exception; they go out once it is fixed', async () => {
      const l = live();
      const before = await l.balance();
      cashfree.accountRefusal = 403;
      const ids = [await payout(l, 71), await payout(l, 72), await payout(l, 73)];
      await until(
        async () => (await l.exceptions()).some((e) => e.kind === 'channel_account'),
        'the exception',
      );
      await new Promise((r) => setTimeout(r, 1500));
      for (const id of ids) assert.equal((await l.status('payout', id)).status, 'PENDING');
      const held = await l.balance();
      assert.equal(held.held - before.held, 21600);
      const account = (await l.exceptions()).filter((e) => e.kind === 'channel_account');
      assert.equal(account.length, 1);
      assert.equal(account[0]!.payment_id, null);
      cashfree.accountRefusal = null;
      for (const id of ids) await l.waitStatus('payout', id, 'SUCCESS', 15_000);
      for (const id of ids) assert.equal(cashfree.created.get(id), 1);
    });

    it('item 8: with CASHFREE_PUBLIC_KEY every call carries a fresh X-Cf-Signature that Cashfree accepts', async () => {
      const l = live();
      cashfree.require2fa = true;
      const from = cashfree.requests.length;
      const id = await payout(l, 81);
      await l.waitStatus('payout', id, 'SUCCESS');
      const sent = cashfree.requests.slice(from).filter((r) => r.body?.transfer_id === id);
      assert.equal(sent.length, 1);
      assert.equal(sent[0]!.answered, 200);
      assert.match(String(sent[0]!.headers['x-cf-signature']), /^[A-Za-z0-9+/]{300,}={0,2}$/);
    });

    describe('with reads that lag behind writes by more than the first retry', () => {
      // The first read after an unknown outcome comes a second later; CHANNEL_POLL_MS is above the lag.
      // A reset connection is not in the document (the proxy reports it): straight to the fake.
      const lagging = useLive(kind, { CHANNEL_POLL_MS: '2500', CHANNEL_TIMEOUT_MS: '1000' }, () => ({
        fakes: { setu, cashfree },
      }));

      it('item 6: after a lost answer, a not-found read never leads to a second transfer', async () => {
        const l = lagging();
        cashfree.webhooks = false;
        cashfree.readLagMs = 2000;
        cashfree.fail('transfer_create', 'reset');
        const id = await payout(l, 66);
        await l.waitStatus('payout', id, 'SUCCESS', 15_000);
        assert.ok(
          reads(cashfree, id).some((r) => r.answered === 404),
          'a read found nothing',
        );
        assert.equal(posts(cashfree, id).length, 1, 'one POST reached the provider');
        assert.equal(cashfree.created.get(id), 1);
      });
    });

    describe('with a send that reaches Cashfree after Paygate gave up on it', () => {
      // A request that takes effect after its caller left is not in the document: straight to the fake.
      const late = useLive(kind, { CHANNEL_POLL_MS: '300', CHANNEL_TIMEOUT_MS: '1000' }, () => ({
        fakes: { setu, cashfree },
      }));

      it('item 6: not-found reads while an unanswered send may still arrive never lead to a second transfer', async () => {
        const l = late();
        cashfree.webhooks = false;
        const arrived = cashfree.lateArrivals;
        // Paygate's POST times out after a second; Cashfree acts on it 8 s after it came.
        cashfree.fail('transfer_create', { arriveAfterMs: 8000 });
        const id = await payout(l, 68);
        await until(() => cashfree.lateArrivals > arrived, 'the first send to take effect', 30_000);
        const before = reads(cashfree, id);
        assert.ok(
          before.filter((r) => r.answered === 404).length >= 2,
          `reads found nothing while it was on its way (${before.map((r) => r.answered).join(', ')})`,
        );
        assert.equal(posts(cashfree, id).length, 1, 'not sent again while the first send may arrive');
        await l.waitStatus('payout', id, 'SUCCESS', 30_000);
        assert.equal(posts(cashfree, id).length, 1, 'one POST reached the provider');
        assert.equal(cashfree.created.get(id), 1);
      });
    });

    it('reports zero violations from the document', () => {
      assert.deepEqual(proxy.violations(), []);
      assert.ok(proxy.output().includes('Forwarding "post" request'));
    });
  });
});
