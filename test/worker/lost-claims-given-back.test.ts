/**
 * A claim whose answer was lost (the connection dropped after the database had applied it) is
 * given back once the database answers again: its rows are claimable at once, as they were
 * before it, instead of leased to nobody until the lease runs out. Rows another claim holds, or
 * that were claimed again since, are left alone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  claimDueDeliveries,
  giveBackDeliveries,
  INTERRUPTED,
} from '../../src/callbacks/deliveries.repository.ts';
import { enqueueDelivery } from '../../src/callbacks/outbox.repository.ts';
import { LostClaims } from '../../src/db/claim.ts';
import {
  claimDueTransactions,
  giveBackTransactions,
} from '../../src/transactions/transaction-claims.repository.ts';
import { DATABASES } from '../support/databases.ts';
import { clockedWorker, skipFor, useGateway, type Gateway } from '../support/harness.ts';

const LEASE_MS = 10_000;

async function pendingDelivery(g: Gateway, name: string, at: number): Promise<string> {
  return enqueueDelivery(
    g.database.db,
    {
      paymentId: `pay_${name}`,
      merchantId: 'mer_test',
      url: 'https://merchant.example/callback',
      body: '{}',
      maxAttempts: 4,
    },
    at,
  );
}

/** A PENDING payout of 10.00 (the wallet topped up for it): its payment_id. */
async function pendingPayout(g: Gateway, orderNo: string): Promise<string> {
  await g.paygate.services.wallets.topUp(g.merchant.merchant_id, 'INR', 100_000);
  const created = await g.post('/payments/payout', {
    money: { amount: 10 },
    merchant_order_no: orderNo,
    receiver: { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' },
  });
  assert.equal(created.status, 200, created.text);
  return created.body.payment_id as string;
}

for (const kind of DATABASES) {
  describe(`claims whose answer was lost on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind);

    it('gives deliveries back uncounted, an interrupted one still to be recorded so, and no other claim’s', async () => {
      const g = gw();
      const at = 1_000_000;
      const cut = await pendingDelivery(g, 'cut', at);
      // Attempt 1 of `cut` went out under a claim whose process stopped: its lease has run out.
      assert.deepEqual(
        (await claimDueDeliveries(g.database, at, LEASE_MS, 10)).map((r) => r.id),
        [cut],
      );
      const fresh = await pendingDelivery(g, 'fresh', at);
      const other = await pendingDelivery(g, 'other', at + LEASE_MS);

      const now = at + 2 * LEASE_MS;
      const lost = LostClaims.start(now, LEASE_MS);
      const taken = await claimDueDeliveries(g.database, now, LEASE_MS, 2, lost.owner);
      assert.deepEqual(taken.map((r) => r.id).sort(), [fresh, cut].sort());
      // Another process's claim in the same millisecond, with the same lease.
      const held = LostClaims.start(now, LEASE_MS);
      assert.deepEqual(
        (await claimDueDeliveries(g.database, now, LEASE_MS, 10, held.owner)).map((r) => r.id),
        [other],
      );

      await giveBackDeliveries(g.database, lost);
      const again = new Map(
        (await claimDueDeliveries(g.database, now + 1, LEASE_MS, 10)).map((r) => [r.id, r]),
      );
      assert.deepEqual([...again.keys()].sort(), [fresh, cut].sort(), 'given back, and only those');
      assert.equal(again.get(fresh)!.attempts, 1, 'the lost claim did not count an attempt');
      assert.equal(again.get(fresh)!.last_error, null);
      assert.equal(again.get(cut)!.attempts, 1, 'still attempt 1, the one cut off');
      assert.equal(again.get(cut)!.last_error, INTERRUPTED, 'and still recorded as interrupted');
    });

    it('gives a payout back with its submission uncounted, and not once claimed again', async () => {
      const g = gw();
      const id = await pendingPayout(g, 'lost-claim');
      const claim = async (now: number, owner?: string) =>
        (await claimDueTransactions(g.database, 'sandbox', now, LEASE_MS, 100, owner)).find(
          (r) => r.payment_id === id,
        );

      const now = Date.now() + 1000;
      const lost = LostClaims.start(now, LEASE_MS);
      assert.equal((await claim(now, lost.owner))?.submit_attempts, 1);
      assert.equal(await claim(now + 1), undefined, 'leased');
      await giveBackTransactions(g.database, lost);
      const back = await claim(now + 2);
      assert.equal(back?.submit_attempts, 1, 'claimable at once, never counted as sent');

      // Claimed again since: giving the lost claim back a second time touches nothing.
      await giveBackTransactions(g.database, lost);
      assert.equal(await claim(now + 3), undefined, 'the later claim keeps it');
    });

    it('sends a sandbox payout whose claim died with its process two reads after the lease, not two minutes', async () => {
      const g = gw();
      const id = await pendingPayout(g, 'dead-claim');
      const row = () =>
        g.database.db
          .selectFrom('transactions')
          .selectAll()
          .where('payment_id', '=', id)
          .executeTakeFirstOrThrow();

      // A process claimed it, may have sent it, and was killed: its claim is never given back.
      const claimedAt = Date.now() + 1000;
      await claimDueTransactions(g.database, 'sandbox', claimedAt, LEASE_MS, 100, 'killed');
      const leaseEnd = (await row()).lease_until!;
      const sandbox = g.paygate.services.channel('sandbox')!;
      const gap = sandbox.pollDelayMs('payout', 0);
      let now = leaseEnd + 1;
      const worker = clockedWorker(g, { now: () => now, leaseMs: LEASE_MS, pollMs: 100 });

      await worker.drain();
      const read = await row();
      assert.equal(read.status, 'PENDING', 'the sandbox does not know it: read, not sent');
      assert.equal(read.not_found_at, now, 'the first read that counts is the one at the lease’s end');
      assert.equal(read.next_action_at, now + gap);

      now += gap;
      await worker.drain();
      const sent = await row();
      assert.equal(sent.status, 'PROCESSING', 'a second read a poll later allows the send');
      assert.match(sent.channel_txn_id ?? '', /^SBXP/);
      assert.equal(sent.submit_attempts, 2);
    });
  });
}
