/**
 * `paygate channels rehearse` (CONTRACT §1) against the fake providers behind their documents (the
 * spec proxies), on both databases, with a serving gateway beside it on the same database (its
 * notification endpoints and its worker), as an operator runs it before the first merchant: the
 * test pays the QR through the fake Setu. A paid rehearsal reports each step with its provider
 * references (one pay-in, one top-up, one refund, one transfer) and leaves the ledger clean and the
 * merchant's balance where it was; an unpaid one closes the QR at Setu, skips the refund and exits
 * 1; a provider failing a step is named in the report, and nothing is sent twice.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { FakeCashfree } from '../support/fake-cashfree.ts';
import { FakeSetu, type FakeQr } from '../support/fake-setu.ts';
import { skipFor } from '../support/harness.ts';
import { readQr } from '../support/qr-reader.ts';
import { until, useLive, type LiveGateway } from '../support/live.ts';
import { cliAsync } from '../support/process.ts';
import { CASHFREE_SPEC, SETU_SPEC, startSpecProxy, type SpecProxy } from '../support/spec-proxy.ts';

const databaseSkip = { sqlite: await skipFor('sqlite'), postgres: await skipFor('postgres') };
// Long enough that Setu's notification, not a poll, usually settles the pay-in; short enough for the refund's read.
const POLL_MS = 2000;
const ACCOUNT = ['--payout-account', '123456789012', '--ifsc', 'HDFC0001234'];

/** The text of the QR code a command drew in the terminal (half blocks, two module rows a line), read as a phone would. */
function terminalQrText(output: string): string | null {
  const escape = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
  const lines = output
    .split('\n')
    .filter((l) => l.startsWith('\x1b[30;47m'))
    .map((l) => [...l.replace(escape, '')]);
  const rows = lines.flatMap((chars) => [
    chars.map((c) => c === '█' || c === '▀'),
    chars.map((c) => c === '█' || c === '▄'),
  ]);
  const scale = 4;
  const width = (rows[0]?.length ?? 0) * scale;
  const height = rows.length * scale;
  const rgba = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const v = rows[Math.floor(y / scale)]![Math.floor(x / scale)] ? 0 : 255;
      rgba.set([v, v, v, 255], (y * width + x) * 4);
    }
  return width > 0 ? readQr(rgba, width, height) : null;
}

interface Step {
  step: string;
  status: string;
  references: Record<string, string | number | boolean | null>;
  detail: string;
}

describe('paygate channels rehearse against the fakes behind their documents', () => {
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

  for (const kind of DATABASES) {
    describe(`on ${kind}`, { skip: databaseSkip[kind] }, () => {
      const live = useLive(kind, { CHANNEL_POLL_MS: String(POLL_MS), CHANNEL_TIMEOUT_MS: '3000' }, () => ({
        fakes: { setu, cashfree },
        proxies: { setu: setuProxy.url, cashfree: cashfreeProxy.url },
      }));

      afterEach(async () => {
        setu.refundEnding = 'success';
        cashfree.ending = 'SUCCESS';
        await live().ledgerOk();
        assert.deepEqual(setuProxy.violations(), [], 'Setu document violations');
        assert.deepEqual(cashfreeProxy.violations(), [], 'Cashfree document violations');
      });

      /** Runs a rehearsal as the operator would (a process of its own); `pay` is called with its QR. */
      async function rehearsal(
        l: LiveGateway,
        args: string[],
        pay: ((qr: FakeQr) => Promise<void>) | null,
      ): Promise<{ status: number | null; id: string; steps: Map<string, Step>; out: string }> {
        setu.notifyUrl = `${l.gw.baseUrl}/channels/setu/notifications`;
        cashfree.notifyUrl = `${l.gw.baseUrl}/channels/cashfree/notifications`;
        const before = new Set(setu.qrs.keys());
        const run = cliAsync(
          ['channels', 'rehearse', '--merchant', l.merchant.merchant_id, ...args, '--json'],
          {
            DATABASE_URL: l.gw.testDb.url,
            PUBLIC_URL: l.gw.baseUrl,
            CHANNEL_POLL_MS: String(POLL_MS),
            CHANNEL_TIMEOUT_MS: '3000',
            ...setu.env(setuProxy.url),
            ...cashfree.env(cashfreeProxy.url),
          },
        );
        if (pay) {
          let qr: FakeQr | undefined;
          await until(
            () => (qr = [...setu.qrs.values()].find((q) => !before.has(q.id))) !== undefined,
            'the QR',
            60_000,
          );
          await pay(qr!);
        }
        const r = await run;
        const out = r.stdout + r.stderr;
        assert.ok(r.json?.rehearsal_id, out);
        return {
          status: r.status,
          id: r.json.rehearsal_id,
          steps: new Map((r.json.steps as Step[]).map((s) => [s.step, s])),
          out,
        };
      }

      it('a paid rehearsal: one pay-in, one top-up, one refund, one transfer, each with its references; the ledger clean and the balance as it was', async () => {
        const l = live();
        const balance = await l.balance();
        const r = await rehearsal(l, [...ACCOUNT, '--wait-s', '60'], async (qr) => {
          assert.equal(qr.amount, 100, 'a ₹1 QR');
          await setu.pay(qr.referenceId);
        });
        const refundPosts = setu.requests.filter((q) => q.path === '/api/v1/merchants/refunds');
        assert.equal(
          r.status,
          0,
          `${r.out}\n${JSON.stringify(await l.exceptions())}\n${JSON.stringify(refundPosts.map((q) => q.body))}`,
        );
        assert.deepEqual([...r.steps.keys()], ['payin', 'topup', 'refund', 'payout']);
        for (const s of r.steps.values()) assert.equal(s.status, 'ok', `${s.step}: ${r.out}`);

        const payin = r.steps.get('payin')!.references;
        const qr = setu.qrFor(String(payin.payment_id))!;
        const printed = terminalQrText(r.out);
        assert.ok(
          printed?.startsWith('upi://pay?') && printed.includes(`tr=${qr.refId}`),
          `the QR printed reads ${printed}`,
        );
        assert.equal(payin.provider, 'setu');
        assert.equal(payin.channel_txn_id, qr.id, "the pay-in's reference is Setu's QR");
        assert.equal(payin.channel_payment_id, qr.payment!.id);
        assert.equal(payin.utr, qr.payment!.rrn);
        // Setu's notification at the serving gateway, or its worker's read, whichever came first.
        assert.match(String(payin.learned_by), /^(notification|poll):setu$/);

        const refund = r.steps.get('refund')!.references;
        const [setuRefund, ...more] = setu.refundsFor(String(refund.payment_id));
        assert.equal(more.length, 0);
        assert.equal(setu.refundPosts(String(refund.payment_id)).length, 1, 'one refund POST');
        assert.equal(setuRefund!.amount, 100);
        assert.equal(refund.channel_txn_id, setuRefund!.id);
        assert.equal(refund.utr, setuRefund!.crn);

        const payout = r.steps.get('payout')!.references;
        const transfer = cashfree.transfers.get(String(payout.payment_id))!;
        assert.equal(payout.provider, 'cashfree');
        assert.equal(cashfree.created.get(String(payout.payment_id)), 1, 'one transfer');
        assert.equal(transfer.transfer_amount, 1);
        assert.equal(payout.channel_txn_id, transfer.cf_transfer_id);
        assert.equal(payout.utr, transfer.transfer_utr);

        assert.equal(setu.count('dqr_create'), [...setu.qrs.values()].length, 'one QR per pay-in asked for');
        // +1 paid in, +1 topped up, -1 refunded, -1 paid out.
        assert.deepEqual(await l.balance(), balance);
        const audited = await l.gw.database.db
          .selectFrom('audit_actions')
          .select(['action', 'detail'])
          .where('merchant_id', '=', l.merchant.merchant_id)
          .execute();
        assert.ok(
          audited.some((a) => a.action === 'credit' && a.detail.includes(r.id)),
          'the top-up is audited',
        );
      });

      it('unpaid within --wait-s: the QR is closed at Setu, the refund skipped, exit 1', async () => {
        const l = live();
        const r = await rehearsal(l, [...ACCOUNT, '--wait-s', '2'], null);
        assert.equal(r.status, 1, r.out);
        const payin = r.steps.get('payin')!;
        assert.equal(payin.status, 'unpaid', r.out);
        assert.equal(payin.references.qr_closed, true);
        assert.equal(setu.qrFor(String(payin.references.payment_id))!.status, 'closed', 'closed at Setu');
        assert.equal(r.steps.get('refund')!.status, 'skipped');
        assert.equal(r.steps.get('topup')!.status, 'ok');
        assert.equal(r.steps.get('payout')!.status, 'ok', 'the payout does not depend on the pay-in');
      });

      it('a provider failing a step is named in the report, and nothing is sent twice', async () => {
        const l = live();
        setu.refundEnding = 'failed';
        cashfree.ending = 'FAILED';
        const r = await rehearsal(l, [...ACCOUNT, '--wait-s', '60'], async (qr) => {
          await setu.pay(qr.referenceId);
        });
        assert.equal(r.status, 1, r.out);
        assert.equal(r.steps.get('payin')!.status, 'ok');
        const refund = r.steps.get('refund')!;
        assert.equal(refund.status, 'failed', r.out);
        assert.equal(refund.references.provider, 'setu');
        assert.match(refund.detail, /setu failed the refund/);
        assert.equal(setu.refundPosts(String(refund.references.payment_id)).length, 1, 'one refund POST');
        const payout = r.steps.get('payout')!;
        assert.equal(payout.status, 'failed', r.out);
        assert.equal(payout.references.provider, 'cashfree');
        assert.match(payout.detail, /cashfree failed the payout/);
        const posts = cashfree.requests.filter(
          (q) => q.method === 'POST' && q.body?.transfer_id === payout.references.payment_id,
        );
        assert.equal(posts.length, 1, 'one transfer POST');
        // Both failures returned their holds.
        assert.equal((await l.balance()).held, 0);
      });
    });
  }
});
