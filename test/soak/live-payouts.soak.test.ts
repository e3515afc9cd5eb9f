/**
 * Soak: 500 live payouts from several merchants while the fake Cashfree, at random, times out,
 * answers 5xx, lags its reads, answers 429, and sends each transfer's webhooks 0–3 times in any
 * order (FAILED then SUCCESS for some, SUCCESS then REVERSED for others). Afterwards, on each
 * database: every payout final, or not final with an exception; exactly one transfer per payout
 * (the fake takes a duplicate transfer_id as a second transfer, so this is Paygate's doing); every
 * exception belongs to a payout whose script could cause it; `ledger verify` clean; per merchant,
 * available + held + paid out (net of reversals, `external:bank_payouts`) − open receivable =
 * credited; and what the ledger says was paid out equals what the fake paid.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import type { CashfreeFault, FakeCashfree, FakeTransfer } from '../support/fake-cashfree.ts';
import { skipFor } from '../support/harness.ts';
import { RECEIVER, until, useLive, type LiveGateway } from '../support/live.ts';

const PAYOUTS = 500;
const MERCHANTS = 5;
const CREDIT = 5_000_000; // paise per merchant
/**
 * CHANNEL_TIMEOUT_MS. The faults that time a call out hold it 300 ms past this; an answer that is
 * merely late on a loaded machine (the fakes share this process's event loop with the gateway and,
 * on SQLite, its synchronous statements) must not, or every such payout waits out IN_TRANSIT_MS.
 */
const TIMEOUT_MS = 2000;

type Script = 'SUCCESS' | 'FAILED' | 'FAILED_THEN_SUCCESS' | 'SUCCESS_THEN_REVERSED';

/** The exceptions a script may cause, and nothing else. */
const MAY_CAUSE: Record<Script, string[]> = {
  SUCCESS: [],
  FAILED: [],
  FAILED_THEN_SUCCESS: ['payout_after_failed', 'status_mismatch'],
  SUCCESS_THEN_REVERSED: ['reversal', 'payout_after_failed', 'reversal_after_failed'],
};

function pick<T>(choices: [T, number][]): T {
  let r = Math.random();
  for (const [value, p] of choices) if ((r -= p) < 0) return value;
  return choices[choices.length - 1]![0];
}

function chaos(operation: 'transfer_create' | 'transfer_read'): CashfreeFault | null {
  const retry = { type: 'rate_limit_error', code: 'too_many_requests', message: 'slow down' };
  return pick<CashfreeFault | null>([
    [{ delayMs: TIMEOUT_MS + 300 }, operation === 'transfer_create' ? 0.04 : 0.02],
    [{ status: 500 }, 0.04],
    [{ status: 503 }, 0.02],
    [{ status: 429, body: retry, headers: { 'retry-after': '1' } }, 0.005],
    [null, 1],
  ]);
}

/** Plays a transfer's script at the fake: its statuses, and webhooks 0–3 times each in any order. */
async function play(fake: FakeCashfree, t: FakeTransfer, script: Script): Promise<void> {
  await new Promise((r) => setTimeout(r, Math.random() * 400));
  const events: Record<Script, string[]> = {
    SUCCESS: ['TRANSFER_SUCCESS'],
    FAILED: ['TRANSFER_FAILED'],
    FAILED_THEN_SUCCESS: ['TRANSFER_FAILED', 'TRANSFER_SUCCESS'],
    SUCCESS_THEN_REVERSED: ['TRANSFER_SUCCESS', 'TRANSFER_REVERSED'],
  };
  const final = events[script].at(-1)!;
  const sent = events[script].flatMap((e) => Array.from({ length: Math.floor(Math.random() * 4) }, () => e));
  sent.sort(() => Math.random() - 0.5);
  // A transfer that changed twice is told last in its final state (Cashfree retries it until answered).
  if (events[script].length > 1 && sent.at(-1) !== final) sent.push(final);
  if (sent.length === 0) {
    t.status = final.replace('TRANSFER_', '');
    if (t.status === 'SUCCESS') t.transfer_utr = String(100_000_000_000 + Math.floor(Math.random() * 8e11));
    return;
  }
  await fake.events(t.transfer_id, sent);
  t.status = final.replace('TRANSFER_', '');
}

async function ledgerSums(l: LiveGateway): Promise<Map<string, Record<string, number>>> {
  const rows = await l.gw.database.db
    .selectFrom('ledger_entries')
    .select(['merchant_id', 'account', (eb) => eb.fn.sum<number>('amount').as('total')])
    .groupBy(['merchant_id', 'account'])
    .execute();
  const out = new Map<string, Record<string, number>>();
  for (const r of rows) {
    const m = out.get(r.merchant_id) ?? {};
    m[r.account] = Number(r.total);
    out.set(r.merchant_id, m);
  }
  return out;
}

for (const kind of DATABASES) {
  describe(
    `soak: live payouts under a misbehaving Cashfree on ${kind}`,
    {
      skip: await skipFor(kind),
    },
    () => {
      const live = useLive(kind, {
        CHANNEL_POLL_MS: '300',
        CHANNEL_TIMEOUT_MS: String(TIMEOUT_MS),
        CASHFREE_MAX_RPS: '200',
      });
      afterEach(async () => live().ledgerOk());

      it(`${PAYOUTS} payouts: all settled once, every exception explained, the money adds up`, async () => {
        const l = live();
        const fake = l.cashfree;
        Object.assign(fake, { ending: 'never', webhooks: false, acceptDuplicates: true, readLagMs: 200 });
        fake.chaos = chaos;
        const merchants = [{ id: l.merchant.merchant_id, key: l.merchant.api_key }];
        for (let i = 1; i < MERCHANTS; i++) {
          const m = await l.gw.paygate.services.merchants.create({
            name: `Soak Shop ${i}`,
            live: true,
            vpa: `soak.shop${i}@pineaxis`,
          });
          await l.gw.paygate.services.wallets.topUp(m.merchant_id, 'INR', CREDIT);
          merchants.push({ id: m.merchant_id, key: m.api_key });
        }
        const credited = new Map(merchants.map((m, i) => [m.id, i === 0 ? 10_000_000_00 : CREDIT]));

        const scripts = new Map<string, Script>();
        const played = new Set<string>();
        const plays: Promise<void>[] = [];
        const watcher = setInterval(() => {
          for (const t of fake.transfers.values()) {
            if (played.has(t.transfer_id) || !scripts.has(t.transfer_id)) continue;
            played.add(t.transfer_id);
            plays.push(play(fake, t, scripts.get(t.transfer_id)!));
          }
        }, 20);
        try {
          const ids: string[] = [];
          for (let i = 0; i < PAYOUTS; i += 25) {
            const batch = await Promise.all(
              Array.from({ length: Math.min(25, PAYOUTS - i) }, async (_, j) => {
                const m = merchants[(i + j) % MERCHANTS]!;
                const res = await l.gw.post(
                  '/payments/payout',
                  {
                    money: { amount: 1 + ((i + j) % 97) + 0.25 },
                    merchant_order_no: `soak-${kind}-${i + j}`,
                    receiver: RECEIVER,
                  },
                  { key: m.key },
                );
                assert.equal(res.status, 200, res.text);
                const script = pick<Script>([
                  ['FAILED_THEN_SUCCESS', 0.1],
                  ['SUCCESS_THEN_REVERSED', 0.05],
                  ['FAILED', 0.15],
                  ['SUCCESS', 1],
                ]);
                scripts.set(res.body.payment_id, script);
                return res.body.payment_id as string;
              }),
            );
            ids.push(...batch);
          }

          const db = l.gw.database.db;
          const settled = async () => {
            const open = await db
              .selectFrom('transactions')
              .select(['payment_id'])
              .where('payment_id', 'in', ids)
              .where('status', 'in', ['PENDING', 'PROCESSING'])
              .execute();
            if (open.length > 0) return false;
            // Every script has played out and its webhooks were answered.
            return played.size === ids.length;
          };
          // A payout whose send went unanswered is not sent again for IN_TRANSIT_MS (two minutes).
          await until(settled, 'every payout final', 900_000).catch(async (err: unknown) => {
            const open = await db
              .selectFrom('transactions')
              .select([
                'payment_id',
                'status',
                'submit_attempts',
                'not_found_at',
                'next_action_at',
                'lease_until',
              ])
              .where('payment_id', 'in', ids)
              .where('status', 'in', ['PENDING', 'PROCESSING'])
              .execute();
            for (const o of open.slice(0, 5)) {
              const calls = fake.requests.filter(
                (r) => r.body?.transfer_id === o.payment_id || r.query.get('transfer_id') === o.payment_id,
              );
              console.log(
                JSON.stringify({
                  ...o,
                  now: Date.now(),
                  script: scripts.get(o.payment_id),
                  played: played.has(o.payment_id),
                }),
                calls.map((c) => `${c.method} ${c.answered ?? 'none'} ${c.at}`).join(', '),
              );
            }
            console.log(`open ${open.length}, played ${played.size} of ${ids.length}`);
            throw err;
          });
          await Promise.all(plays);
          fake.chaos = null;
          // Let the last webhooks and reversals land.
          await new Promise((r) => setTimeout(r, 1000));

          const posts = new Map<number, number>();
          for (const id of ids) {
            const n = fake.requests.filter((r) => r.method === 'POST' && r.body?.transfer_id === id).length;
            posts.set(n, (posts.get(n) ?? 0) + 1);
          }
          for (const id of ids.filter((i) => fake.created.get(i) !== 1)) {
            const calls = fake.requests.filter(
              (r) => r.body?.transfer_id === id || r.query.get('transfer_id') === id,
            );
            console.log(
              `${id}: ${calls.map((c) => `${c.method} ${c.answered ?? 'none'} ${c.at}`).join(', ')}`,
            );
          }
          for (const id of ids) assert.equal(fake.created.get(id), 1, `one transfer for ${id}`);

          const exceptions = await db
            .selectFrom('channel_exceptions')
            .select(['kind', 'payment_id'])
            .where('payment_id', 'in', ids)
            .execute();
          for (const e of exceptions) {
            const script = scripts.get(e.payment_id!)!;
            assert.ok(MAY_CAUSE[script].includes(e.kind), `${e.kind} for a ${script} payout`);
          }
          const unexplained = await db
            .selectFrom('channel_exceptions')
            .select(['kind'])
            .where('payment_id', 'is', null)
            .execute();
          assert.deepEqual(unexplained, []);

          const sums = await ledgerSums(l);
          let ledgerPaid = 0;
          for (const m of merchants) {
            const s = sums.get(m.id) ?? {};
            const paid = s['external:bank_payouts'] ?? 0;
            const owed = -(s['external:receivable'] ?? 0);
            ledgerPaid += paid;
            assert.equal(
              (s.available ?? 0) + (s.held ?? 0) + paid - owed,
              credited.get(m.id),
              `merchant ${m.id}: available + held + paid out − owed = credited`,
            );
          }
          const fakePaid = [...fake.transfers.values()]
            .filter((t) => ids.includes(t.transfer_id) && t.status === 'SUCCESS')
            .reduce((sum, t) => sum + Math.round(t.transfer_amount * 100), 0);
          assert.equal(ledgerPaid, fakePaid, 'what the ledger says was paid out is what the fake paid');
          const counts = exceptions.reduce<Record<string, number>>(
            (c, e) => ({ ...c, [e.kind]: (c[e.kind] ?? 0) + 1 }),
            {},
          );
          console.log(
            `[${kind}] ${PAYOUTS} payouts; calls to the fake ${fake.requests.length}; ` +
              `payouts by POSTs received ${JSON.stringify(Object.fromEntries([...posts].sort()))} ` +
              `(transfers created: one each); exceptions ${JSON.stringify(counts)}`,
          );
        } finally {
          clearInterval(watcher);
          fake.chaos = null;
        }
      });
    },
  );
}
