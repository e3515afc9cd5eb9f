/**
 * Settings: the documented defaults (README), every setting read, and a bad value refused with one
 * line that names the setting.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8080);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.databaseUrl, 'sqlite:./data/paygate.db');
    assert.equal(c.publicUrl, 'http://localhost:8080');
    assert.equal(c.callbackMaxRetries, 3);
    assert.equal(c.callbackRetryIntervalMs, 30_000);
    assert.equal(c.callbackTimeoutMs, 10_000);
    assert.equal(c.allowPrivateCallbackUrls, false);
    assert.equal(c.webhookSecretOverlapS, 86_400);
    assert.equal(c.sandboxPayoutSettleMs, 2000);
    assert.equal(c.payinExpiryS, 900);
    assert.equal(c.rateLimitPerMinute, 6000);
    assert.deepEqual(c.supportedCurrencies, ['INR']);
    assert.equal(c.maxAmountPaise, 1_000_000_000);
    assert.equal(c.payinFeeBps, 0);
    assert.equal(c.logLevel, 'info');
    assert.equal(c.reconcileLookbackDays, 7);
    assert.equal(c.channelResendAfterMs, 600_000);
    assert.ok(Object.isFrozen(c));
  });

  it('reads every setting', () => {
    const c = loadConfig({
      PORT: '9090',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db:5432/paygate',
      PUBLIC_URL: 'https://pay.example.com/',
      CALLBACK_MAX_RETRIES: '5',
      CALLBACK_RETRY_INTERVAL_MS: '100',
      CALLBACK_TIMEOUT_MS: '250',
      ALLOW_PRIVATE_CALLBACK_URLS: 'true',
      WEBHOOK_SECRET_OVERLAP_S: '0',
      SANDBOX_PAYOUT_SETTLE_MS: '0',
      PAYIN_EXPIRY_S: '1',
      RATE_LIMIT_PER_MINUTE: '0',
      SUPPORTED_CURRENCIES: 'INR, USD',
      MAX_AMOUNT: '2500.50',
      PAYIN_FEE_BPS: '250',
      LOG_LEVEL: 'warn',
    });
    assert.equal(c.port, 9090);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.databaseUrl, 'postgres://u@db:5432/paygate');
    assert.equal(c.publicUrl, 'https://pay.example.com');
    assert.equal(c.callbackMaxRetries, 5);
    assert.equal(c.callbackRetryIntervalMs, 100);
    assert.equal(c.callbackTimeoutMs, 250);
    assert.equal(c.allowPrivateCallbackUrls, true);
    assert.equal(c.webhookSecretOverlapS, 0);
    assert.equal(c.sandboxPayoutSettleMs, 0);
    assert.equal(c.payinExpiryS, 1);
    assert.equal(c.rateLimitPerMinute, 0);
    assert.deepEqual(c.supportedCurrencies, ['INR', 'USD']);
    assert.equal(c.maxAmountPaise, 250_050);
    assert.equal(c.payinFeeBps, 250);
    assert.equal(c.logLevel, 'warn');
    assert.equal(loadConfig({ PORT: '3000' }).publicUrl, 'http://localhost:3000');
    assert.equal(loadConfig({ DATABASE_URL: '/var/lib/paygate.db' }).databaseUrl, '/var/lib/paygate.db');
    assert.equal(loadConfig({ ALLOW_PRIVATE_CALLBACK_URLS: 'false' }).allowPrivateCallbackUrls, false);
  });

  it('refuses a bad value with one line naming the setting', () => {
    const bad: Record<string, string>[] = [
      { PORT: 'abc' },
      { PORT: '70000' },
      { PORT: '-1' },
      { MAX_AMOUNT: '-1' },
      { MAX_AMOUNT: '0' },
      { MAX_AMOUNT: '10.001' },
      { MAX_AMOUNT: 'lots' },
      { PAYIN_FEE_BPS: '10001' },
      { PAYIN_FEE_BPS: '2.5' },
      { PAYIN_EXPIRY_S: '0' },
      { CALLBACK_MAX_RETRIES: 'three' },
      { CALLBACK_TIMEOUT_MS: '0' },
      { RATE_LIMIT_PER_MINUTE: '-5' },
      { SANDBOX_PAYOUT_SETTLE_MS: '1s' },
      { ALLOW_PRIVATE_CALLBACK_URLS: 'maybe' },
      { WEBHOOK_SECRET_OVERLAP_S: '1d' },
      { WEBHOOK_SECRET_OVERLAP_S: '2592001' },
      { SUPPORTED_CURRENCIES: 'inr' },
      { SUPPORTED_CURRENCIES: ',' },
      { LOG_LEVEL: 'loud' },
      { PUBLIC_URL: 'ftp://example.com' },
      { PUBLIC_URL: 'not a url' },
      { DATABASE_URL: 'mysql://u@h/db' },
    ];
    for (const env of bad) {
      const [name] = Object.keys(env);
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError, `${name}: a ConfigError`);
          assert.match(err.message, new RegExp(`^${name}\\b`), `${name}: ${err.message}`);
          assert.doesNotMatch(err.message, /\n/);
          return true;
        },
        JSON.stringify(env),
      );
    }
  });

  it('never shows a database password in its message', () => {
    assert.throws(
      () => loadConfig({ DATABASE_URL: 'mysql://user:s3cret@db/paygate' }),
      (err: Error) => !err.message.includes('s3cret'),
    );
  });

  it('turns a live channel on when all its settings are set, off when none are, and refuses a partial set', () => {
    const off = loadConfig({});
    assert.equal(off.setu, null);
    assert.equal(off.cashfree, null);
    assert.deepEqual(
      [
        off.channelTimeoutMs,
        off.channelPollMs,
        off.liveMaxPayinPaise,
        off.liveMaxPayoutPaise,
        off.channelStuckAfterS,
      ],
      [10_000, 60_000, 10_000_000, 50_000_000, 86_400],
    );
    const setu = {
      SETU_BASE_URL: 'https://umap-uat-core.setu.co/',
      SETU_CLIENT_ID: 'id',
      SETU_CLIENT_SECRET: 'secret-value',
      SETU_MERCHANT_ID: 'm',
      SETU_WEBHOOK_SECRET: 'wh',
    };
    const cashfree = {
      CASHFREE_BASE_URL: 'https://sandbox.cashfree.com/payout',
      CASHFREE_CLIENT_ID: 'c',
      CASHFREE_CLIENT_SECRET: 's',
    };
    const on = loadConfig({ ...setu, ...cashfree, LIVE_MAX_PAYIN: '2000.50' });
    assert.equal(on.setu?.baseUrl, 'https://umap-uat-core.setu.co');
    assert.equal(on.setu?.authUrl, 'https://accountservice.setu.co');
    assert.equal(on.cashfree?.baseUrl, 'https://sandbox.cashfree.com/payout');
    assert.equal(on.liveMaxPayinPaise, 200_050);
    assert.throws(
      () => loadConfig({ ...setu, SETU_WEBHOOK_SECRET: '', SETU_MERCHANT_ID: ' ' }),
      (err: Error) =>
        err instanceof ConfigError &&
        /^Setu is partly configured: set SETU_MERCHANT_ID, SETU_WEBHOOK_SECRET too/.test(err.message) &&
        !err.message.includes('secret-value'),
    );
    assert.throws(
      () => loadConfig({ CASHFREE_CLIENT_ID: 'c' }),
      /Cashfree is partly configured: set CASHFREE_BASE_URL, CASHFREE_CLIENT_SECRET/,
    );
    assert.throws(() => loadConfig({ LIVE_MAX_PAYOUT: '1.234' }), /LIVE_MAX_PAYOUT must be/);
  });
});
