/**
 * Recording callback attempts in batches (the dispatcher records attempts that finish together in
 * one transaction): each record moves its delivery on only if the delivery is still as its claim
 * left it, and says whether it did, whatever its neighbours in the batch are.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  claimDueDeliveries,
  listAttempts,
  recordAttempts,
  type AttemptRecord,
  type DeliveryRow,
} from '../src/callbacks/deliveries.repository.ts';
import { enqueueDelivery } from '../src/callbacks/outbox.repository.ts';
import { DATABASES } from './support/databases.ts';
import { skipFor, useGateway, type Gateway } from './support/harness.ts';

async function pendingDeliveries(g: Gateway, n: number, at: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const delivery = {
      paymentId: `pay${Date.now().toString(36)}${i}`,
      merchantId: 'mer_test',
      url: 'https://merchant.example/callback',
      body: '{}',
      maxAttempts: 4,
    };
    ids.push(await enqueueDelivery(g.database.db, delivery, at));
  }
  return ids;
}

function record(row: DeliveryRow, over: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    deliveryId: row.id,
    claimedAttempts: row.attempts,
    claimedLease: row.lease_until ?? 0,
    startedAt: 1,
    latencyMs: 5,
    httpStatus: 200,
    errorKind: null,
    snippet: null,
    status: 'delivered',
    nextAttemptAt: null,
    at: 2,
    ...over,
  };
}

for (const kind of DATABASES) {
  describe(`callback attempts recorded in batches on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind);

    it('applies each record whose claim still holds, and only those, and logs every attempt', async () => {
      const g = gw();
      const db = g.database.db;
      const at = 1_000_000;
      const ids = await pendingDeliveries(g, 3, at);
      const claimed = await claimDueDeliveries(g.database, at, 10_000, 10);
      const byId = new Map(claimed.filter((r) => ids.includes(r.id)).map((r) => [r.id, r]));
      const [a, b, c] = ids.map((id) => byId.get(id) as DeliveryRow);
      assert.ok(a && b && c);

      const result = await recordAttempts(db, [
        record(a),
        // Its lease ran out and another claim took it over: this record must not win.
        record(b, { claimedLease: (b.lease_until ?? 0) - 1 }),
        record(c, {
          status: 'pending',
          httpStatus: 503,
          errorKind: 'http_status',
          nextAttemptAt: at + 60_000,
        }),
        // The same delivery twice in one batch: only the record of the current claim is applied.
        record(a, { claimedLease: (a.lease_until ?? 0) - 1 }),
      ]);
      assert.deepEqual(result, [true, false, true, false]);

      const rows = new Map(
        (await db.selectFrom('callback_deliveries').selectAll().where('id', 'in', ids).execute()).map((r) => [
          r.id,
          r,
        ]),
      );
      assert.equal(rows.get(a.id)?.status, 'delivered');
      assert.equal(rows.get(a.id)?.attempts, 1);
      assert.equal(rows.get(a.id)?.delivered_at, 2);
      assert.equal(rows.get(a.id)?.lease_until, null);
      // Untouched: still pending under the lease of the claim that owns it.
      assert.equal(rows.get(b.id)?.status, 'pending');
      assert.equal(rows.get(b.id)?.attempts, 0);
      assert.equal(rows.get(b.id)?.lease_until, b.lease_until);
      assert.equal(rows.get(c.id)?.status, 'pending');
      assert.equal(rows.get(c.id)?.attempts, 1);
      assert.equal(rows.get(c.id)?.next_attempt_at, at + 60_000);
      assert.equal(rows.get(c.id)?.last_error, 'http_status 503');
      assert.equal(rows.get(c.id)?.lease_until, null);

      // Every attempt is in the log, applied or not.
      assert.equal((await listAttempts(db, a.id)).length, 2);
      assert.equal((await listAttempts(db, b.id)).length, 1);
      assert.deepEqual(
        (await listAttempts(db, c.id)).map((x) => [x.attempt_no, x.http_status, x.error_kind]),
        [[1, 503, 'http_status']],
      );
    });
  });
}
