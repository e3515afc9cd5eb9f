/**
 * The providers' limits are the whole cluster's (CONTRACT §10), for `npm run soak`: three
 * `paygate serve` processes on one PostgreSQL at CASHFREE_MAX_RPS=50 send 2,000 payouts to the
 * fake Cashfree directly (no spec proxy, whose speed is not the gateway's). At the fake, no sliding
 * second holds more than 52 call starts (the limit and a little for the timers), and over the
 * middle 80 % of the run the calls come at 50 a second within 10 %: the limit is kept, and used.
 * The fake runs in a process of its own, so the calls are stamped as they arrive, not when the test
 * process (busy making payouts and reading the database) gets to them.
 * Every payout is sent once and settles.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { skipFor, startGateway, type Gateway } from '../support/harness.ts';
import { freePort, spawnServer, type ServerProcess } from '../support/process.ts';
import { LIVE_VPA, RECEIVER, until } from '../support/live.ts';
import { spawnFakeCashfree, type FakeCashfreeProcess } from '../support/fake-cashfree-process.ts';
import { FakeSetu } from '../support/fake-setu.ts';

const RPS = 50;
const PAYOUTS = 2000;

/** The most call starts any one-second window holds, measured from each call. */
export function busiestSecond(at: readonly number[]): number {
  let most = 0;
  for (let i = 0, j = 0; i < at.length; i++) {
    while (j < at.length && at[j]! < at[i]! + 1000) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

/** Calls a second over the middle 80 % of the run (first call to last). */
export function middleRate(at: readonly number[]): number {
  const [first, last] = [at[0]!, at.at(-1)!];
  const from = first + (last - first) * 0.1;
  const to = first + (last - first) * 0.9;
  return at.filter((t) => t >= from && t <= to).length / ((to - from) / 1000);
}

describe(
  'three paygate serve processes on postgres share CASHFREE_MAX_RPS',
  { skip: await skipFor('postgres') },
  () => {
    it('no second at Cashfree holds more than 52 calls, and the middle of the run goes at 50 a second', async (t) => {
      const setu = await new FakeSetu().start();
      let cashfree: FakeCashfreeProcess | undefined = await spawnFakeCashfree();
      const env = {
        ...setu.env(),
        ...cashfree.env,
        CASHFREE_MAX_RPS: String(RPS),
        CHANNEL_POLL_MS: '10000',
      };
      let gw: Gateway | undefined;
      let servers: ServerProcess[] = [];
      try {
        // The payouts are made first, by a gateway that sends nothing (its worker does not run).
        gw = await startGateway('postgres', { env });
        const merchant = await gw.paygate.services.merchants.create({
          name: 'Cluster Shop',
          live: true,
          vpa: LIVE_VPA,
        });
        await gw.paygate.services.wallets.topUp(merchant.merchant_id, 'INR', 10_000_000_00);
        const ids: string[] = [];
        for (let i = 0; i < PAYOUTS; i += 50) {
          const made = await Promise.all(
            Array.from({ length: Math.min(50, PAYOUTS - i) }, (_, j) =>
              gw!.post(
                '/payments/payout',
                { money: { amount: 10 }, merchant_order_no: `cl-${i + j}`, receiver: RECEIVER },
                { key: merchant.api_key },
              ),
            ),
          );
          for (const res of made) {
            assert.equal(res.status, 200, res.text);
            ids.push(res.body.payment_id);
          }
        }
        assert.equal((await cashfree.report()).calls.length, 0);

        // Cashfree's webhooks go to the first process, listening before its worker sends anything.
        const port = await freePort();
        cashfree.notify(`http://127.0.0.1:${port}/channels/cashfree/notifications`);
        const serverEnv = { ...env, DATABASE_URL: gw.config.databaseUrl, LOG_LEVEL: 'warn' };
        servers.push(await spawnServer({ ...serverEnv, PORT: String(port) }, { timeoutMs: 60_000 }));
        servers.push(...(await Promise.all([1, 2].map(() => spawnServer(serverEnv, { timeoutMs: 60_000 })))));

        const settled = async () => {
          const row = await gw!.database.db
            .selectFrom('transactions')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('kind', '=', 'payout')
            .where('status', '=', 'SUCCESS')
            .executeTakeFirstOrThrow();
          return Number(row.n);
        };
        await until(
          async () => (await settled()) === PAYOUTS,
          'every payout SUCCESS',
          (PAYOUTS / RPS) * 3000,
        );
        await Promise.all(servers.map((s) => s.stop()));
        const outputs = servers.map((s) => s.output()).join('\n');
        servers = [];

        const seenThere = await cashfree.report();
        await cashfree.stop();
        cashfree = undefined;
        const at = seenThere.calls.map((c) => c.at).sort((a, b) => a - b);
        assert.ok(at.length >= PAYOUTS);
        for (const id of ids) assert.equal(seenThere.created[id], 1, `${id} sent once`);
        const [most, rate] = [busiestSecond(at), middleRate(at)];
        const seen =
          `the busiest second held ${most} calls; the middle of the run went at ${rate.toFixed(1)} a second; ` +
          `the fake's event loop stalled ${seenThere.longestStallMs} ms at most`;
        t.diagnostic(seen);
        assert.ok(most <= RPS + 2, `${seen}\n${outputs}`);
        assert.ok(Math.abs(rate - RPS) <= RPS * 0.1, seen);
        const report = await gw.paygate.services.wallets.verify();
        assert.deepEqual(report.problems, []);
      } finally {
        await Promise.all(servers.map((s) => s.kill()));
        await gw?.close();
        await setu.stop();
        await cashfree?.stop();
      }
    });
  },
);
