/**
 * Claiming and recording callback attempts. Records that finish together go in one transaction,
 * and each moves its delivery on only if the delivery is still as its claim left it. An attempt
 * counts when it is claimed, so one cut off by its process stopping counts too; the next claim
 * records it as interrupted. A record the database refuses still releases its row.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import {
  claimDueDeliveries,
  listAttempts,
  recordAttempts,
  type AttemptRecord,
  type DeliveryRow,
} from '../../src/callbacks/deliveries.repository.ts';
import { enqueueDelivery } from '../../src/callbacks/outbox.repository.ts';
import { DATABASES } from '../support/databases.ts';
import { skipFor, startGateway, useGateway, type Gateway } from '../support/harness.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';

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
      // Untouched: still pending under the lease of the claim that owns it, which counted its attempt.
      assert.equal(rows.get(b.id)?.status, 'pending');
      assert.equal(rows.get(b.id)?.attempts, 1);
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

    it('counts an attempt when it is claimed; a claim after its lease ran out gets it back as interrupted', async () => {
      const g = gw();
      const at = 2_000_000;
      const [id] = await pendingDeliveries(g, 1, at);
      const mine = async (now: number) =>
        (await claimDueDeliveries(g.database, now, 1000, 100)).filter((r) => r.id === id);

      const [first] = await mine(at);
      assert.equal(first?.attempts, 1);
      assert.equal(first.last_error, null);
      assert.deepEqual(await mine(at + 1000), [], 'not claimed again while its lease runs');
      // Its process stopped without recording: the next claim gets the same attempt, marked.
      const [again] = await mine(at + 1001);
      assert.equal(again?.attempts, 1);
      assert.equal(again.last_error, 'interrupted');
      assert.equal(again.lease_until, at + 1001 + 1000);
      await recordAttempts(g.database.db, [
        record(again, {
          status: 'pending',
          httpStatus: null,
          errorKind: 'interrupted',
          nextAttemptAt: at + 5000,
        }),
      ]);
      // Recorded and released: the next claim is the next attempt.
      const [next] = await mine(at + 5000);
      assert.equal(next?.attempts, 2);
      assert.equal(next.last_error, null);
    });
  });
}

/** A clock the tests move by hand; the dispatcher reads it for claims, leases and schedules. */
let clock = 10_000_000;

for (const kind of DATABASES) {
  describe(`callback dispatcher releases and counts on ${kind}`, { skip: await skipFor(kind) }, () => {
    const TIMEOUT_MS = 20_000;
    const INTERVAL_MS = 1000;
    let g: Gateway;
    let receiver: Receiver;

    before(async () => {
      g = await startGateway(kind, {
        env: {
          ALLOW_PRIVATE_CALLBACK_URLS: 'true',
          CALLBACK_TIMEOUT_MS: String(TIMEOUT_MS),
          CALLBACK_RETRY_INTERVAL_MS: String(INTERVAL_MS),
          CALLBACK_MAX_RETRIES: '2',
        },
        now: () => clock,
      });
      receiver = await startReceiver({
        answer: (req, nth) => {
          if (req.path === '/poison') return nth === 1 ? { status: 500, body: 'poison' } : 200;
          return 500;
        },
      });
    });

    after(async () => {
      await g.paygate.dispatcher.stop();
      await receiver.close();
      await g.close();
    });

    async function enqueue(path: string): Promise<{ id: string; paymentId: string }> {
      const paymentId = `pay${(++clock).toString(36)}`;
      const body = JSON.stringify({ payment_id: paymentId, amount: 5, status: 'SUCCESS' });
      const delivery = { paymentId, merchantId: g.merchant.merchant_id, url: receiver.url(path), body };
      return { id: await enqueueDelivery(g.database.db, { ...delivery, maxAttempts: 3 }, clock), paymentId };
    }

    const row = (id: string) =>
      g.database.db
        .selectFrom('callback_deliveries')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();

    async function until(ready: () => Promise<boolean>, what: string): Promise<void> {
      const deadline = Date.now() + 15_000;
      while (!(await ready())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }

    /** Lets the dispatcher run at the clock's time until `ready`, then stops it. */
    async function dispatchUntil(ready: () => Promise<boolean>, what: string): Promise<void> {
      g.paygate.dispatcher.start();
      g.paygate.dispatcher.wake();
      try {
        await until(ready, what);
      } finally {
        await g.paygate.dispatcher.stop();
      }
    }

    /** What a process does before it is killed mid-send: it claims, and records nothing. */
    async function claimAndDie(id: string): Promise<number> {
      const claimed = (await claimDueDeliveries(g.database, clock, TIMEOUT_MS + 5000, 100)).find(
        (r) => r.id === id,
      );
      assert.ok(claimed, 'the delivery was due');
      return claimed.attempts;
    }

    it('counts a send cut off by its process; after the last allowed attempt the delivery fails and is not sent again', async () => {
      const { id, paymentId } = await enqueue('/500');
      const attemptsLogged = async (n: number) => (await listAttempts(g.database.db, id)).length === n;

      assert.equal(await claimAndDie(id), 1);
      clock += TIMEOUT_MS + 5000 + 1;
      await dispatchUntil(() => attemptsLogged(1), 'the interrupted attempt recorded');
      assert.equal(receiver.forPayment(paymentId).length, 0, 'recording it sends nothing');
      let d = await row(id);
      assert.deepEqual(
        [d.status, d.attempts, d.last_error, d.lease_until],
        ['pending', 1, 'interrupted', null],
      );
      assert.equal(d.next_attempt_at, clock + INTERVAL_MS, 'its retry follows the usual interval');

      clock = d.next_attempt_at!;
      await dispatchUntil(() => attemptsLogged(2), 'the second attempt');
      assert.deepEqual(
        receiver.forPayment(paymentId).map((r) => r.attempt),
        [2],
      );

      // The last allowed attempt is claimed and its process dies.
      clock = (await row(id)).next_attempt_at!;
      assert.equal(await claimAndDie(id), 3);
      clock += TIMEOUT_MS + 5000 + 1;
      await dispatchUntil(async () => (await row(id)).status !== 'pending', 'the delivery settled');
      d = await row(id);
      assert.deepEqual(
        [d.status, d.attempts, d.max_attempts, d.last_error, d.lease_until, d.next_attempt_at],
        ['failed', 3, 3, 'interrupted', null, null],
      );
      assert.deepEqual(
        (await listAttempts(g.database.db, id)).map((a) => [a.attempt_no, a.http_status, a.error_kind]),
        [
          [1, null, 'interrupted'],
          [2, 500, 'http_status'],
          [3, null, 'interrupted'],
        ],
      );
      assert.deepEqual(
        await claimDueDeliveries(g.database, clock + 3_600_000, 1000, 100).then((rs) =>
          rs.filter((r) => r.id === id),
        ),
        [],
      );
      assert.deepEqual(
        receiver.forPayment(paymentId).map((r) => r.attempt),
        [2],
        'nothing was sent beyond the limit',
      );
    });

    it('releases a row whose record the database refused, so the next attempt need not wait out the lease', async () => {
      // The database itself refuses the first attempt's record: its log row, by a trigger.
      if (kind === 'sqlite') {
        await sql`create trigger refuse_poison before insert on callback_attempts
          when new.response_snippet = 'poison' begin select raise(abort, 'poisoned'); end`.execute(
          g.database.db,
        );
      } else {
        await sql`create function refuse_poison() returns trigger language plpgsql as $$
          begin if new.response_snippet = 'poison' then raise exception 'poisoned'; end if; return new; end $$`.execute(
          g.database.db,
        );
        await sql`create trigger refuse_poison before insert on callback_attempts
          for each row execute function refuse_poison()`.execute(g.database.db);
      }
      const { id, paymentId } = await enqueue('/poison');
      const claimedAt = clock;
      await dispatchUntil(
        async () => (await row(id)).lease_until === null && (await row(id)).attempts === 1,
        'the row released',
      );
      let d = await row(id);
      assert.deepEqual([d.status, d.attempts, d.last_error], ['pending', 1, 'http_status 500']);
      assert.equal(d.next_attempt_at, clock + INTERVAL_MS);
      assert.deepEqual(await listAttempts(g.database.db, id), [], 'the refused record left no log row');

      // Long before the first claim's lease would have run out, the next claim takes it.
      clock = d.next_attempt_at!;
      assert.ok(clock < claimedAt + TIMEOUT_MS + 5000);
      await dispatchUntil(async () => (await row(id)).status !== 'pending', 'the retry');
      d = await row(id);
      assert.deepEqual([d.status, d.attempts], ['delivered', 2]);
      assert.deepEqual(
        receiver.forPayment(paymentId).map((r) => r.attempt),
        [1, 2],
      );
      assert.deepEqual(
        (await listAttempts(g.database.db, id)).map((a) => [a.attempt_no, a.http_status]),
        [[2, 200]],
      );
    });
  });
}
