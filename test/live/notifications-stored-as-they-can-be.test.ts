/**
 * Notifications that cannot be stored as they came (CONTRACT §10: every verified notification is
 * stored and applied once), on both databases, with Paygate's calls to the fakes going through the
 * spec proxies. PostgreSQL's text and jsonb refuse NUL (`\u0000` or a raw 0x00 byte) and lone
 * surrogates (`\ud800`); SQLite takes them. Correctly signed bodies carrying them in ids, types,
 * references and amounts, on both providers' endpoints: none is answered 5xx, none stays pending,
 * each is applied or becomes an exception, and the exact bytes are kept. A property test sends random
 * signed bodies to both endpoints with the same result.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { Pool } from 'undici';
import type { FakeCashfree } from '../support/fake-cashfree.ts';
import type { FakeSetu } from '../support/fake-setu.ts';
import { onEachDatabase } from '../support/harness.ts';
import { LIVE_VPA, useLiveBehindDocuments, type LiveGateway } from '../support/live.ts';

/** Both providers' formulas as CHANNELS.md gives them, over bytes (the fakes sign text). */
const hmac = (secret: string, ...parts: (string | Buffer)[]) => {
  const h = createHmac('sha256', secret);
  for (const p of parts) h.update(p);
  return h.digest('base64');
};

/** A JSON text whose strings keep lone surrogates as `\uXXXX` escapes (JSON.stringify writes them so). */
const json = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');

/** Puts a raw 0x00 byte into a JSON text at `at` (inside a string or between tokens). */
const withRawNul = (text: string, at: number) => {
  const bytes = Buffer.from(text, 'utf8');
  const i = Math.min(Math.max(at, 0), bytes.length);
  return Buffer.concat([bytes.subarray(0, i), Buffer.from([0]), bytes.subarray(i)]);
};

/** The review's variants: NUL, lone surrogates and raw 0x00 bytes in ids, types, references and amounts. */
function setuBodies(tag: string, real: { paymentId: string; qr: string }): Buffer[] {
  const base = { eventType: 'payment.initiated', id: `p-${tag}`, merchantReferenceId: 'pay_none' };
  return [
    json({ ...base, eventId: `nul\u0000${tag}` }),
    json({ ...base, eventId: `lone\ud800${tag}` }),
    json({ ...base, eventId: `low\udc00${tag}`, eventType: 'payment.\udfff' }),
    json({ ...base, eventId: `type-${tag}`, eventType: 'payment.\u0000success' }),
    json({ ...base, eventId: `ref-${tag}`, id: 'p\u0000\ud800', merchantReferenceId: `pay_\u0000${tag}` }),
    json({ ...base, eventId: `amt-${tag}`, eventType: 'payment.success', amount: '1\u00000' }),
    // A payment of a real pay-in whose UPI id holds a NUL: not the pay-in's, so an exception (money in suspense).
    json({
      eventId: `vpa-${tag}`,
      eventType: 'payment.success',
      id: `pmt-${tag}`,
      status: 'success',
      merchantReferenceId: real.paymentId,
      productInstanceId: real.qr,
      merchantVpa: `${LIVE_VPA}\u0000`,
      amount: 1500,
      rrn: '123456789012',
      txnId: `txn-${tag}`,
    }),
    withRawNul(JSON.stringify({ ...base, eventId: `raw-${tag}` }), 12),
    withRawNul(JSON.stringify({ ...base, eventId: `raw2-${tag}` }), 0),
    Buffer.concat([
      json({ ...base, eventId: `bytes-${tag}` }).subarray(0, 20),
      Buffer.from([0xff, 0x00, 0xc3]),
    ]),
  ];
}

function cashfreeBodies(tag: string, transferId: string): Buffer[] {
  const data = {
    transfer_id: transferId,
    cf_transfer_id: `cf-${tag}`,
    transfer_amount: 15,
    status: 'SUCCESS',
  };
  return [
    json({ type: 'TRANSFER_SUCCESS\u0000', data: { ...data, cf_transfer_id: `a-${tag}` } }),
    json({ type: 'TRANSFER_\ud800FAILED', data: { ...data, cf_transfer_id: `b-${tag}` } }),
    json({ type: 'TRANSFER_SUCCESS', data: { ...data, transfer_id: `${transferId}\u0000` } }),
    json({
      type: 'TRANSFER_SUCCESS',
      data: { ...data, transfer_id: `pay_\ud800${tag}`, cf_transfer_id: `c\udc00${tag}` },
    }),
    json({
      type: 'TRANSFER_SUCCESS',
      data: { ...data, transfer_amount: '15\u0000', transfer_utr: 'u\ud800' },
    }),
    json({
      type: 'LOW_BALANCE_ALERT',
      event_time: `2026-11-28 \u0000${tag}`,
      data: { current_balance: '1\ud800' },
    }),
    withRawNul(
      JSON.stringify({ type: 'TRANSFER_SUCCESS', data: { ...data, cf_transfer_id: `d-${tag}` } }),
      30,
    ),
    Buffer.concat([Buffer.from([0x00]), json({ type: 'CREDIT_CONFIRMATION', data: { tag } })]),
  ];
}

/** Every stored notification is applied, or failed with its exception; none pending. */
async function noneLeftPending(l: LiveGateway): Promise<void> {
  const db = l.gw.database.db;
  const rows = await db.selectFrom('channel_events').select(['id', 'state']).execute();
  const failed = rows.filter((r) => r.state === 'failed');
  const exceptions = await db
    .selectFrom('channel_exceptions')
    .select('reference')
    .where('kind', '=', 'notification_failed')
    .execute();
  assert.deepEqual(
    rows.filter((r) => r.state === 'pending'),
    [],
    'no notification stays pending',
  );
  for (const f of failed)
    assert.ok(
      exceptions.some((e) => e.reference === `event ${f.id}`),
      `event ${f.id} has its exception`,
    );
}

const behindDocuments = useLiveBehindDocuments();

await onEachDatabase('notifications stored in a form the database holds', (kind) => {
  describe(`bodies PostgreSQL's text refuses, on ${kind}`, () => {
    const live = behindDocuments(kind, { CHANNEL_TIMEOUT_MS: '5000' });
    let setu: FakeSetu;
    let cashfree: FakeCashfree;
    before(() => ({ setu, cashfree } = live()));
    let pool: Pool;
    before(() => {
      pool = new Pool(live().gw.baseUrl, { connections: 4 });
    });
    after(async () => {
      await pool.close();
    });
    afterEach(async () => {
      await noneLeftPending(live());
      await live().ledgerOk();
    });

    const send = async (path: string, raw: Buffer, headers: Record<string, string>) => {
      const res = await pool.request({
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json', ...headers },
        body: raw,
      });
      const text = await res.body.text();
      return { status: res.statusCode, text };
    };
    const toSetu = (raw: Buffer) =>
      send('/channels/setu/notifications', raw, { 'x-setu-signature': hmac(setu.webhookSecret, raw) });
    const toCashfree = (raw: Buffer) => {
      const ts = String(Date.now());
      return send('/channels/cashfree/notifications', raw, {
        'x-webhook-timestamp': ts,
        'x-webhook-signature': hmac(cashfree.webhookSecret, ts, raw),
      });
    };

    it("answers 200 to each of the review's bodies on both endpoints, stores the exact bytes and applies each", async () => {
      const l = live();
      const created = await l.post('/payments/onsite/payin', {
        money: { amount: 15 },
        merchant_order_no: `nul-vpa-${kind}`,
      });
      assert.equal(created.status, 200, created.text);
      const paymentId = created.body.payment_id as string;
      const bodies = [
        ...setuBodies(kind, { paymentId, qr: setu.qrFor(paymentId)!.id }).map((raw) => ({ raw, go: toSetu })),
        ...cashfreeBodies(kind, 'pay_unknown0000000000000000').map((raw) => ({ raw, go: toCashfree })),
      ];
      for (const { raw, go } of bodies) {
        const res = await go(raw);
        assert.equal(res.status, 200, `${raw.toString('base64')}: ${res.text}`);
      }
      const rows = await l.gw.database.db
        .selectFrom('channel_events')
        .select(['body', 'raw_base64', 'state'])
        .execute();
      for (const { raw } of bodies) {
        const kept = rows.find((r) =>
          (r.raw_base64 ? Buffer.from(r.raw_base64, 'base64') : Buffer.from(r.body)).equals(raw),
        );
        assert.ok(kept, `stored exactly: ${raw.toString('base64')}`);
        assert.equal(kept.state, 'applied');
        assert.ok(!kept.body.includes('\u0000'));
      }
      // The payment to a UPI id with a NUL is not the pay-in's: an exception holding its money, the pay-in still open.
      const exceptions = await l.exceptions();
      assert.ok(
        exceptions.some((e) => e.kind === 'unknown_reference' && e.reference === `pmt-${kind}`),
        JSON.stringify(exceptions),
      );
      assert.equal((await l.status('payin', paymentId)).status, 'PENDING');
      // The low-balance warning whose time and balance hold a NUL and a lone surrogate is kept: its one
      // exception while open.
      assert.ok(
        exceptions.some((e) => e.kind === 'low_balance' && e.reference === 'low_balance'),
        JSON.stringify(exceptions),
      );
    });

    it('a property: random signed bodies to both endpoints are never 5xx and never stay pending', async () => {
      const text = fc
        .array(
          fc.oneof(
            fc.string({ unit: 'binary', maxLength: 6 }),
            fc.constantFrom('\u0000', '\ud800', '\udfff', '\udbff', '\ud83d\ude00', 'pay_', '"', '\\'),
          ),
          { maxLength: 5 },
        )
        .map((parts) => parts.join(''));
      const amount = fc.oneof(fc.integer(), fc.double(), text, fc.constant(null));
      const setuBody = fc.record({
        eventId: fc.oneof(text, fc.uuid()),
        eventType: fc.oneof(
          fc.constantFrom('payment.success', 'payment.failed', 'payment.initiated', 'refund.success'),
          text,
        ),
        id: text,
        merchantReferenceId: text,
        productInstanceId: text,
        merchantVpa: fc.oneof(fc.constant(LIVE_VPA), text),
        amount,
        rrn: text,
      });
      const cashfreeBody = fc.record({
        type: fc.oneof(
          fc.constantFrom('TRANSFER_SUCCESS', 'TRANSFER_FAILED', 'TRANSFER_REVERSED', 'LOW_BALANCE_ALERT'),
          text,
        ),
        event_time: text,
        data: fc.record({
          transfer_id: text,
          cf_transfer_id: text,
          transfer_amount: amount,
          transfer_utr: text,
        }),
      });
      const raw = (body: fc.Arbitrary<object>) =>
        fc.oneof(
          body.map((b) => json(b)),
          fc.tuple(body, fc.nat(200)).map(([b, at]) => withRawNul(JSON.stringify(b), at)),
          fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
        );
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            raw(setuBody).map((r) => ({ r, setu: true })),
            raw(cashfreeBody).map((r) => ({ r, setu: false })),
          ),
          async ({ r, setu: toS }) => {
            const res = toS ? await toSetu(r) : await toCashfree(r);
            assert.equal(res.status, 200, `${r.toString('base64')}: ${res.text}`);
          },
        ),
        { numRuns: 150 },
      );
    });
  });
});
