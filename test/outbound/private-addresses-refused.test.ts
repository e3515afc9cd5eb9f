/**
 * With ALLOW_PRIVATE_CALLBACK_URLS off (the default), callbacks never reach loopback, private,
 * link-local or metadata addresses, whether the URL names them directly or through a hostname.
 * No test here sends anything beyond 127.0.0.1/::1: 10.0.0.1 and 169.254.169.254 must be refused
 * before any connect, which the recorded error kind shows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isBlockedAddress } from '../../src/outbound/address-guard.ts';
import { DATABASES } from '../support/databases.ts';
import { skipFor, startGateway, type Gateway } from '../support/harness.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';

describe('callback address rules', () => {
  it('allow only globally routable unicast addresses; IPv6 by allow-list', () => {
    const blocked = [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.254',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '224.0.0.1',
      '240.0.0.1',
      '::1',
      '::',
      'fc00::1',
      'fd00:ec2::254',
      'fe80::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::a00:1',
      '64:ff9b:1::a00:1',
      // IPv4-compatible (::/96): ipaddr.js calls these unicast, and they passed the guard once.
      '::127.0.0.1',
      '::7f00:1',
      '::8.8.8.8',
      '::ffff:8.8.8.8',
      '::ffff:0:7f00:1',
      '2001::1',
      '2001:2::1',
      '2001:db8::1',
      '2002:7f00:1::1',
      '3fff::1',
      '100::1',
      'fec0::1',
      'not-an-ip',
    ];
    const allowed = [
      '8.8.8.8',
      '1.1.1.1',
      '172.32.0.1',
      '100.128.0.1',
      '2606:4700:4700::1111',
      '2a00:1450:4001:80b::200e',
      '[2001:4860:4860::8888]',
    ];
    for (const a of blocked) assert.equal(isBlockedAddress(a), true, `${a} is blocked`);
    for (const a of allowed) assert.equal(isBlockedAddress(a), false, `${a} is allowed`);
  });
});

for (const kind of DATABASES) {
  describe(`callback protection on ${kind}`, { skip: await skipFor(kind) }, () => {
    let g: Gateway;
    let receiver: Receiver;

    before(async () => {
      receiver = await startReceiver({ host: '::' });
      g = await startGateway(kind, {
        env: {
          ALLOW_PRIVATE_CALLBACK_URLS: 'false',
          CALLBACK_RETRY_INTERVAL_MS: '200',
          CALLBACK_TIMEOUT_MS: '500',
          CALLBACK_MAX_RETRIES: '2',
        },
      });
      g.paygate.dispatcher.start();
    });

    after(async () => {
      await g.paygate.dispatcher.stop();
      await g.close();
      await receiver.close();
    });

    async function settledPayin(callbackUrl: string | null, key?: string): Promise<string> {
      const res = await g.post(
        '/payments/onsite/payin',
        {
          money: { amount: 500 },
          merchant_order_no: `p-${Math.random().toString(36).slice(2)}`,
          callback_url: callbackUrl,
        },
        { key },
      );
      assert.equal(res.status, 200, res.text);
      const done = await g.post(
        '/sandbox/payin/complete',
        { payment_id: res.body.payment_id, status: 'SUCCESS' },
        { key },
      );
      assert.equal(done.status, 200, done.text);
      return res.body.payment_id;
    }

    it('rejects http callback URLs at creation', async () => {
      const res = await g.post('/payments/onsite/payin', {
        money: { amount: 500 },
        merchant_order_no: 'http-1',
        callback_url: receiver.url(),
      });
      assert.equal(res.status, 422);
      assert.equal(res.body.detail[0].type, 'url_scheme');
    });

    it('never connects to loopback, private, link-local or metadata targets, and records each attempt as blocked', async () => {
      const port = receiver.port;
      const targets = [
        `https://127.0.0.1:${port}/callback`,
        'https://10.0.0.1/callback',
        'https://169.254.169.254/latest/meta-data/',
        `https://[::1]:${port}/callback`,
        `https://[::ffff:127.0.0.1]:${port}/callback`,
        `https://[::127.0.0.1]:${port}/callback`,
        `https://[::7f00:1]:${port}/callback`,
        `https://localhost:${port}/callback`,
        `https://0.0.0.0:${port}/callback`,
      ];
      const ids = await Promise.all(targets.map((url) => settledPayin(url)));
      // An http URL can still be stored, as a merchant's default set from the CLI: it is refused at send time.
      const plain = await g.newMerchant({ callbackUrl: receiver.url() });
      const plainId = await settledPayin(null, plain.api_key);

      const expected = new Map<string, string>([
        ...ids.map((id) => [id, 'blocked_address'] as [string, string]),
        [plainId, 'blocked_scheme'],
      ]);
      const deadline = Date.now() + 20_000;
      for (const [id, errorKind] of expected) {
        let [d] = await g.paygate.services.callbacks.list({ paymentId: id });
        while (d?.status === 'pending' && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
          [d] = await g.paygate.services.callbacks.list({ paymentId: id });
        }
        assert.ok(d, `a delivery exists for ${id}`);
        assert.equal(d.status, 'failed', `${d.url} ends failed`);
        assert.equal(d.attempts, 3, 'blocked attempts follow the usual schedule');
        const log = await g.paygate.services.callbacks.attempts(d.delivery_id);
        assert.deepEqual(
          log.map((a) => `${a.attempt}:${a.error}:${a.http_status}`),
          [1, 2, 3].map((n) => `${n}:${errorKind}:null`),
          `${d.url} is recorded as ${errorKind}`,
        );
      }
      assert.equal(receiver.connections(), 0, 'the local receiver was never contacted');
      assert.equal(receiver.received.length, 0);
    });
  });
}
