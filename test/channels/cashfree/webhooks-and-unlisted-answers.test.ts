/**
 * Cashfree's webhooks and the answers its document does not list, on both databases, against the
 * fake Cashfree without the spec proxy. The signature formula is pinned by known answers computed
 * outside the code (openssl, below), and the fake signs with its own code: a signature without the
 * timestamp, one by another secret (the API secret, when the webhook secret differs), an old
 * signature under a new timestamp, and a timestamp 6 minutes ahead are refused; an old timestamp is
 * taken (Cashfree retries for hours). Also: a repeat is
 * answered `duplicate: true`; event types Paygate does not act on are stored, LOW_BALANCE_ALERT
 * opens `low_balance`; an amount that cannot be read is an exception; a 401 keeps payouts PENDING;
 * Cashfree's 2FA refuses a missing, wrong or 5-minute-old `X-Cf-Signature`.
 */
import assert from 'node:assert/strict';
import { constants, publicEncrypt } from 'node:crypto';
import { afterEach, describe, it } from 'node:test';
import { verifyCashfree } from '../../../src/channels/cashfree/cashfree.signature.ts';
import { DATABASES } from '../../support/databases.ts';
import { skipFor } from '../../support/harness.ts';
import { until, useLive } from '../../support/live.ts';
import { payout, posts } from '../../support/live-payouts.ts';

/**
 * Known answers, computed with openssl:
 *   printf '%s' "$TIMESTAMP$BODY" | openssl dgst -sha256 -hmac "$SECRET" -binary | base64
 * and, for the formula without the timestamp, the same over "$BODY" alone.
 */
const KNOWN = {
  secret: 'whsec_known_answer',
  timestamp: '1700000000000',
  body: '{"type":"TRANSFER_SUCCESS","data":{"transfer_id":"x"}}',
  signature: '/UqzbSjy/ApB9kVNRJ5FNdcXgX0CrWB6nVoF2iiyNjc=',
  withoutTimestamp: 'IbU5BW/cEfVsO2+5wL+inmkooWzEoQ78i+6PmVMfnfw=',
};

describe('the Cashfree webhook signature against known answers', () => {
  const raw = Buffer.from(KNOWN.body);
  const at = Number(KNOWN.timestamp) + 60_000;

  it('accepts the known signature, and not the one made without the timestamp', () => {
    assert.equal(verifyCashfree(raw, KNOWN.timestamp, KNOWN.signature, KNOWN.secret, at), true);
    assert.equal(verifyCashfree(raw, KNOWN.timestamp, KNOWN.withoutTimestamp, KNOWN.secret, at), false);
  });

  it('refuses a signature of the right length by another secret and a timestamp 6 minutes ahead; takes one 6 hours old', () => {
    const other = Buffer.from(KNOWN.signature, 'base64');
    other[0]! ^= 1;
    assert.equal(verifyCashfree(raw, KNOWN.timestamp, other.toString('base64'), KNOWN.secret, at), false);
    assert.equal(
      verifyCashfree(raw, KNOWN.timestamp, KNOWN.signature, KNOWN.secret, at + 6 * 3_600_000),
      true,
    );
    assert.equal(
      verifyCashfree(
        raw,
        KNOWN.timestamp,
        KNOWN.signature,
        KNOWN.secret,
        Number(KNOWN.timestamp) - 6 * 60_000,
      ),
      false,
    );
  });

  it('refuses the known signature in any other shape: "<valid>, junk", trailing text, no padding, URL-safe letters, a space', () => {
    const shapes = [
      `${KNOWN.signature}, junk`,
      `${KNOWN.signature}junk`,
      `${KNOWN.signature}=`,
      KNOWN.signature.replace(/=$/, ''),
      KNOWN.signature.replace(/\//g, '_'),
      `${KNOWN.signature.slice(0, 8)} ${KNOWN.signature.slice(8)}`,
    ];
    for (const shape of shapes)
      assert.equal(verifyCashfree(raw, KNOWN.timestamp, shape, KNOWN.secret, at), false, shape);
    assert.equal(verifyCashfree(raw, ` ${KNOWN.timestamp}`, KNOWN.signature, KNOWN.secret, at), false);
  });
});

for (const kind of DATABASES) {
  describe(`Cashfree webhooks and undocumented answers on ${kind}`, { skip: await skipFor(kind) }, () => {
    const live = useLive(kind, { CHANNEL_POLL_MS: '400' });
    afterEach(async () => {
      Object.assign(live().cashfree, { ending: 'SUCCESS', webhooks: true, accountRefusal: null });
      await live().ledgerOk();
    });

    it("the fake signs as Cashfree's formula says (the known answer)", () => {
      assert.equal(live().cashfree.sign(KNOWN.timestamp, KNOWN.body, KNOWN.secret), KNOWN.signature);
    });

    it('refuses a signature by another secret, an old signature under a new timestamp and a timestamp 6 minutes ahead (401); changes nothing', async () => {
      const l = live();
      l.cashfree.ending = 'never';
      const id = await payout(l, 9);
      await l.waitStatus('payout', id, 'PROCESSING');
      // The webhook tells of a SUCCESS the fake does not show yet: the worker's polls (every 400 ms)
      // must not settle the payout while the refused signatures are sent.
      const stored = l.cashfree.transfers.get(id)!;
      const t = { ...stored, status: 'SUCCESS', transfer_utr: '999988887777' };
      const raw = JSON.stringify(l.cashfree.webhookBody('TRANSFER_SUCCESS', t));
      const now = String(Date.now());
      const old = String(Date.now() - 60_000);
      const ahead = String(Date.now() + 6 * 60_000);
      const send = (timestamp: string, signature: string) =>
        l.cashfree.webhook('TRANSFER_SUCCESS', t, { body: raw, timestamp, signature });
      assert.equal(await send(now, l.cashfree.sign(now, raw, 'another-secret-of-the-same-length')), 401);
      assert.equal(
        await send(now, l.cashfree.sign(now, raw, l.cashfree.clientSecret)),
        401,
        'the API secret',
      );
      assert.equal(await send(now, l.cashfree.sign(old, raw)), 401);
      assert.equal(await send(ahead, l.cashfree.sign(ahead, raw)), 401);
      assert.equal((await l.status('payout', id)).status, 'PROCESSING');
      Object.assign(stored, { status: 'SUCCESS', transfer_utr: '999988887777' });
      assert.equal(await send(now, l.cashfree.sign(now, raw)), 200);
      await l.waitStatus('payout', id, 'SUCCESS');
    });

    it('answers duplicate: true to a repeated notification, false to the first', async () => {
      const l = live();
      l.cashfree.ending = 'never';
      const id = await payout(l, 10);
      await l.waitStatus('payout', id, 'PROCESSING');
      const t = l.cashfree.transfers.get(id)!;
      Object.assign(t, { status: 'SUCCESS', transfer_utr: '111122223333' });
      const raw = JSON.stringify(l.cashfree.webhookBody('TRANSFER_SUCCESS', t));
      const from = l.cashfree.webhookReplies.length;
      assert.equal(await l.cashfree.webhook('TRANSFER_SUCCESS', t, { body: raw }), 200);
      assert.equal(await l.cashfree.webhook('TRANSFER_SUCCESS', t, { body: raw }), 200);
      assert.deepEqual(
        l.cashfree.webhookReplies.slice(from).map((r) => JSON.parse(r).duplicate),
        [false, true],
      );
    });

    it('stores event types it does not act on and answers 200; LOW_BALANCE_ALERT opens low_balance', async () => {
      const l = live();
      const t = { transfer_id: '', cf_transfer_id: '' } as never;
      const stamp = `2026-11-25 10:${String(Date.now() % 60).padStart(2, '0')}:00`;
      const bodies = {
        LOW_BALANCE_ALERT: {
          type: 'LOW_BALANCE_ALERT',
          event_time: stamp,
          data: { current_balance: 1234.5 },
        },
        CREDIT_CONFIRMATION: { type: 'CREDIT_CONFIRMATION', event_time: stamp, data: { amount: 5000 } },
        BENEFICIARY_INCIDENT: { type: 'BENEFICIARY_INCIDENT', event_time: stamp, data: { bank: 'HDFC' } },
      };
      for (const [type, body] of Object.entries(bodies))
        assert.equal(await l.cashfree.webhook(type, t, { body: JSON.stringify(body) }), 200);
      const stored = await l.gw.database.db
        .selectFrom('channel_events')
        .select('type')
        .where('type', 'in', Object.keys(bodies))
        .execute();
      assert.deepEqual(stored.map((r) => r.type).sort(), Object.keys(bodies).sort());
      const exceptions = await l.gw.database.db
        .selectFrom('channel_exceptions')
        .select(['kind', 'amount'])
        .where('kind', '=', 'low_balance')
        .execute();
      assert.deepEqual(
        exceptions.map((e) => [e.kind, Number(e.amount)]),
        [['low_balance', 123450]],
      );
    });

    it('keeps a SUCCESS whose amount cannot be read exactly as an exception; the payout stays PROCESSING', async () => {
      const l = live();
      l.cashfree.ending = 'never';
      const id = await payout(l, 100.5);
      await l.waitStatus('payout', id, 'PROCESSING');
      const t = l.cashfree.transfers.get(id)!;
      Object.assign(t, { status: 'SUCCESS', transfer_utr: '123412341234' });
      const body = l.cashfree.webhookBody('TRANSFER_SUCCESS', t) as { data: Record<string, unknown> };
      body.data.transfer_amount = '100 rupees and 50 paise';
      assert.equal(await l.cashfree.webhook('TRANSFER_SUCCESS', t, { body: JSON.stringify(body) }), 200);
      await until(async () => (await l.exceptions(id)).length === 1, 'the exception');
      assert.equal((await l.exceptions(id))[0]!.kind, 'amount_mismatch');
      assert.equal((await l.status('payout', id)).status, 'PROCESSING');
      await l.cashfree.webhook('TRANSFER_SUCCESS', t);
      await l.waitStatus('payout', id, 'SUCCESS');
    });

    it('keeps payouts PENDING with their holds on a 401 (a wrong key), one channel_account exception', async () => {
      const l = live();
      const before = await l.balance();
      l.cashfree.accountRefusal = 401;
      const ids = [await payout(l, 11), await payout(l, 12)];
      await until(
        async () => (await l.exceptions()).some((e) => e.kind === 'channel_account'),
        'the exception',
      );
      await new Promise((r) => setTimeout(r, 1200));
      for (const id of ids) assert.equal((await l.status('payout', id)).status, 'PENDING');
      assert.equal((await l.balance()).held - before.held, 2300);
      assert.equal((await l.exceptions()).filter((e) => e.kind === 'channel_account').length, 1);
      l.cashfree.accountRefusal = null;
      for (const id of ids) await l.waitStatus('payout', id, 'SUCCESS', 15_000);
      for (const id of ids) assert.equal(posts(l.cashfree, id).filter((p) => p.answered === 200).length, 1);
    });

    it("Cashfree's 2FA refuses a missing, wrong or 5-minute-old X-Cf-Signature with 403", async () => {
      const l = live();
      l.cashfree.require2fa = true;
      try {
        const sign = (clientId: string, seconds: number) =>
          publicEncrypt(
            { key: l.cashfree.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' },
            Buffer.from(`${clientId}.${seconds}`),
          ).toString('base64');
        const read = async (signature?: string) => {
          const res = await fetch(`${l.cashfree.url}/transfers?transfer_id=nothing`, {
            headers: {
              'x-client-id': l.cashfree.clientId,
              'x-client-secret': l.cashfree.clientSecret,
              'x-api-version': '2024-01-01',
              ...(signature && { 'x-cf-signature': signature }),
            },
          });
          await res.arrayBuffer();
          return res.status;
        };
        const now = Math.floor(Date.now() / 1000);
        assert.equal(await read(), 403);
        assert.equal(await read(sign('someone-else', now)), 403);
        assert.equal(await read(sign(l.cashfree.clientId, now - 300)), 403);
        assert.equal(await read(sign(l.cashfree.clientId, now)), 404);
      } finally {
        l.cashfree.require2fa = false;
      }
    });
  });

  describe(`Cashfree 2FA without CASHFREE_PUBLIC_KEY on ${kind}`, { skip: await skipFor(kind) }, () => {
    const live = useLive(kind, { CASHFREE_PUBLIC_KEY: '' });
    afterEach(async () => live().ledgerOk());

    it('is refused (403) as the account: the payout waits PENDING, one channel_account exception', async () => {
      const l = live();
      l.cashfree.require2fa = true;
      const id = await payout(l, 14);
      await until(
        async () => (await l.exceptions()).some((e) => e.kind === 'channel_account'),
        'the exception',
      );
      assert.equal((await l.status('payout', id)).status, 'PENDING');
      assert.equal(l.cashfree.created.size, 0);
      l.cashfree.require2fa = false;
      await l.waitStatus('payout', id, 'SUCCESS', 15_000);
    });
  });
}
