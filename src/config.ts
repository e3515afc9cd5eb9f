/**
 * The one place where settings are read. Everything else receives a frozen `Config`.
 * A bad value throws a `ConfigError` whose message is one line naming the setting.
 */
import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly publicUrl: string;
  readonly callbackMaxRetries: number;
  readonly callbackRetryIntervalMs: number;
  readonly callbackTimeoutMs: number;
  readonly callbackConcurrency: number;
  readonly allowPrivateCallbackUrls: boolean;
  /** AUTO_REFUND_UNMATCHED: customers' money that no pay-in may keep is refunded from suspense at once. */
  readonly autoRefundUnmatched: boolean;
  /** How long, after a rotation, the previous webhook secret signs beside the new one, in seconds. */
  readonly webhookSecretOverlapS: number;
  readonly sandboxPayoutSettleMs: number;
  readonly payinExpiryS: number;
  readonly rateLimitPerMinute: number;
  readonly supportedCurrencies: readonly string[];
  /** Largest amount accepted, in paise. */
  readonly maxAmountPaise: number;
  readonly payinFeeBps: number;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** How often background workers look for due work when nothing woke them, in ms. */
  readonly workerPollMs: number;
  /** How long a new PostgreSQL connection may take; past it the request is answered 503. */
  readonly databaseConnectTimeoutMs: number;
  /** How long a request (headers and body) may take to arrive; past it 408, or the connection closes. */
  readonly requestTimeoutMs: number;
  /**
   * The proxies whose `X-Forwarded-For` is believed (addresses, CIDR ranges, or proxy-addr's
   * `loopback`, `linklocal`, `uniquelocal`), or null: the client is the socket's peer.
   */
  readonly trustProxy: readonly string[] | null;
  /** When set, `/metrics` answers only with this as a bearer token. */
  readonly metricsToken: string | null;
  /** Setu UPI for live pay-ins, or null when its settings are not set. */
  readonly setu: SetuSettings | null;
  /** Cashfree Payouts for live payouts, or null when its settings are not set. */
  readonly cashfree: CashfreeSettings | null;
  /** One request to a channel, in ms. */
  readonly channelTimeoutMs: number;
  /** How long to wait for a channel's notification before asking the channel, in ms. */
  readonly channelPollMs: number;
  /** Calls per second per process to each provider (a 429 pauses that provider's calls beyond this). */
  readonly setuMaxRps: number;
  readonly cashfreeMaxRps: number;
  /** The rails' per-transaction limits for live merchants, in paise (the minimum is 100 on both). */
  readonly liveMaxPayinPaise: number;
  readonly liveMaxPayoutPaise: number;
  /** A live transaction still not final after this many seconds is listed as an exception. */
  readonly channelStuckAfterS: number;
  /**
   * NOTIFICATION_SILENCE_S: a channel with open pay-ins or payouts and no verified notification for
   * this many seconds opens a `channel_silent` exception.
   */
  readonly notificationSilenceS: number;
  /** When the daily reconciliation runs, as minutes after IST midnight (RECONCILE_AT, HH:MM). */
  readonly reconcileAtMinutes: number;
  /**
   * How many days before the reconciled day a run also reads back the transactions that became final
   * then and that the provider can still change (a reversal, a late payment, a refund's late outcome).
   */
  readonly reconcileLookbackDays: number;
  /**
   * The least time after a send whose outcome is unknown before a Setu call may be sent again, in ms
   * (CHANNEL_RESEND_AFTER_S): Setu documents no uniqueness of its references.
   */
  readonly channelResendAfterMs: number;
}

export interface SetuSettings {
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly merchantId: string;
  readonly webhookSecret: string;
}

export interface CashfreeSettings {
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Verifies webhooks: Cashfree signs them with the account's oldest active key's secret. */
  readonly webhookSecret: string;
  /** Cashfree's 2FA public key (PEM): every call then carries `X-Cf-Signature`. Null without 2FA by signature. */
  readonly publicKey: string | null;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const range =
    max === Number.MAX_SAFE_INTEGER
      ? `a whole number of at least ${min}`
      : `a whole number from ${min} to ${max}`;
  const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!(value >= min && value <= max)) throw new ConfigError(`${name} must be ${range}, got "${raw}"`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function url(name: string, raw: string): string {
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error();
    return raw.replace(/\/+$/, '');
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
}

const PROXY_PRESETS = ['loopback', 'linklocal', 'uniquelocal'];

function trustProxy(env: Env): string[] | null {
  const raw = env.TRUST_PROXY?.trim() ?? '';
  if (raw === '' || ['off', 'false', 'no', '0'].includes(raw.toLowerCase())) return null;
  const entries = raw.split(',').map((e) => e.trim());
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const valid =
      PROXY_PRESETS.includes(entry) ||
      (family !== 0 &&
        extra === undefined &&
        (bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128))));
    if (!valid)
      throw new ConfigError(
        `TRUST_PROXY must be off or a comma-separated list of proxy addresses or CIDR ranges (or loopback, linklocal, uniquelocal), got "${raw}"`,
      );
  }
  return entries;
}

function metricsToken(env: Env): string | null {
  const raw = env.METRICS_TOKEN ?? '';
  if (raw === '') return null;
  if (!/^[\x21-\x7e]{16,256}$/.test(raw))
    throw new ConfigError('METRICS_TOKEN must be 16 to 256 printable characters without spaces');
  return raw;
}

/** An amount setting in rupees with at most 2 decimals, as paise. */
function amountSetting(env: Env, name: string, fallback: string): number {
  const raw = env[name]?.trim() || fallback;
  const match = /^(\d{1,11})(?:\.(\d{1,2}))?$/.exec(raw);
  if (!match || Number(raw) <= 0)
    throw new ConfigError(`${name} must be a positive amount with at most 2 decimals, got "${raw}"`);
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

/**
 * A channel's settings: all set (the channel is on), none set (off), or some set, which stops
 * start-up naming the ones missing.
 */
function channelSettings<K extends string>(
  env: Env,
  label: string,
  names: Record<K, string>,
): Record<K, string> | null {
  const entries = Object.entries(names) as [K, string][];
  const missing = entries.filter(([, name]) => !env[name]?.trim()).map(([, name]) => name);
  if (missing.length === entries.length) return null;
  if (missing.length > 0)
    throw new ConfigError(
      `${label} is partly configured: set ${missing.join(', ')} too (or none of its settings)`,
    );
  return Object.fromEntries(entries.map(([key, name]) => [key, env[name]!.trim()])) as Record<K, string>;
}

function setuSettings(env: Env): SetuSettings | null {
  const s = channelSettings(env, 'Setu', {
    baseUrl: 'SETU_BASE_URL',
    clientId: 'SETU_CLIENT_ID',
    clientSecret: 'SETU_CLIENT_SECRET',
    merchantId: 'SETU_MERCHANT_ID',
    webhookSecret: 'SETU_WEBHOOK_SECRET',
  });
  if (!s) return null;
  return Object.freeze({
    ...s,
    baseUrl: url('SETU_BASE_URL', s.baseUrl),
    authUrl: url('SETU_AUTH_URL', env.SETU_AUTH_URL?.trim() || 'https://accountservice.setu.co'),
  });
}

function cashfreeSettings(env: Env): CashfreeSettings | null {
  const s = channelSettings(env, 'Cashfree', {
    baseUrl: 'CASHFREE_BASE_URL',
    clientId: 'CASHFREE_CLIENT_ID',
    clientSecret: 'CASHFREE_CLIENT_SECRET',
  });
  if (!s) return null;
  return Object.freeze({
    ...s,
    baseUrl: url('CASHFREE_BASE_URL', s.baseUrl),
    webhookSecret: env.CASHFREE_WEBHOOK_SECRET?.trim() || s.clientSecret,
    publicKey: publicKeySetting(env.CASHFREE_PUBLIC_KEY?.trim() ?? ''),
  });
}

/** CASHFREE_PUBLIC_KEY: PEM text, or the path of a file holding it; checked to be a public key. */
function publicKeySetting(raw: string): string | null {
  if (!raw) return null;
  let pem = raw;
  if (!raw.includes('-----BEGIN')) {
    try {
      pem = readFileSync(raw, 'utf8');
    } catch {
      throw new ConfigError(
        `CASHFREE_PUBLIC_KEY must be PEM text or a readable file, got "${raw.slice(0, 80)}"`,
      );
    }
  }
  try {
    createPublicKey(pem);
  } catch {
    throw new ConfigError('CASHFREE_PUBLIC_KEY is not a PEM public key');
  }
  return pem;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Builds the config from an environment (normally `process.env`). */
function reconcileAt(env: Env): number {
  const raw = env.RECONCILE_AT?.trim() || '02:00';
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(raw);
  if (!m)
    throw new ConfigError(`RECONCILE_AT must be a time of day in IST as HH:MM, got "${env.RECONCILE_AT}"`);
  return Number(m[1]) * 60 + Number(m[2]);
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST?.trim() || '127.0.0.1';
  const databaseUrl = env.DATABASE_URL?.trim() || 'sqlite:./data/paygate.db';
  if (/^[a-z]+:\/\//i.test(databaseUrl) && !/^postgres(ql)?:\/\//i.test(databaseUrl)) {
    throw new ConfigError(
      `DATABASE_URL must be postgres://…, sqlite:PATH or a file path, got "${databaseUrl.split('@').pop()}"`,
    );
  }
  const publicUrl = url('PUBLIC_URL', env.PUBLIC_URL?.trim() || `http://localhost:${port}`);

  const currencies = (env.SUPPORTED_CURRENCIES ?? 'INR')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  if (currencies.length === 0 || currencies.some((c) => !/^[A-Z]{3}$/.test(c))) {
    throw new ConfigError(
      `SUPPORTED_CURRENCIES must be a comma-separated list of ISO codes such as INR, got "${env.SUPPORTED_CURRENCIES}"`,
    );
  }

  const maxAmountRaw = env.MAX_AMOUNT?.trim() || '10000000.00';
  const maxMatch = /^(\d{1,11})(?:\.(\d{1,2}))?$/.exec(maxAmountRaw);
  if (!maxMatch || Number(maxAmountRaw) <= 0) {
    throw new ConfigError(
      `MAX_AMOUNT must be a positive amount with at most 2 decimals, got "${maxAmountRaw}"`,
    );
  }
  const maxAmountPaise = Number(maxMatch[1]) * 100 + Number((maxMatch[2] ?? '').padEnd(2, '0'));

  const logLevel = (env.LOG_LEVEL?.trim().toLowerCase() || 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  }

  return Object.freeze({
    port,
    host,
    databaseUrl,
    publicUrl,
    callbackMaxRetries: integer(env, 'CALLBACK_MAX_RETRIES', 3, 0, 100),
    callbackRetryIntervalMs: integer(env, 'CALLBACK_RETRY_INTERVAL_MS', 30_000, 1),
    callbackTimeoutMs: integer(env, 'CALLBACK_TIMEOUT_MS', 10_000, 1),
    callbackConcurrency: integer(env, 'CALLBACK_CONCURRENCY', 64, 1, 10_000),
    allowPrivateCallbackUrls: boolean(env, 'ALLOW_PRIVATE_CALLBACK_URLS', false),
    autoRefundUnmatched: boolean(env, 'AUTO_REFUND_UNMATCHED', true),
    webhookSecretOverlapS: integer(env, 'WEBHOOK_SECRET_OVERLAP_S', 86_400, 0, 30 * 86_400),
    sandboxPayoutSettleMs: integer(env, 'SANDBOX_PAYOUT_SETTLE_MS', 2000, 0),
    payinExpiryS: integer(env, 'PAYIN_EXPIRY_S', 900, 1),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 6000, 0),
    supportedCurrencies: Object.freeze(currencies),
    maxAmountPaise,
    payinFeeBps: integer(env, 'PAYIN_FEE_BPS', 0, 0, 10_000),
    logLevel,
    workerPollMs: integer(env, 'WORKER_POLL_MS', 1000, 10, 60_000),
    databaseConnectTimeoutMs: integer(env, 'DATABASE_CONNECT_TIMEOUT_MS', 5000, 1, 600_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    trustProxy: trustProxy(env),
    metricsToken: metricsToken(env),
    setu: setuSettings(env),
    cashfree: cashfreeSettings(env),
    channelTimeoutMs: integer(env, 'CHANNEL_TIMEOUT_MS', 10_000, 100, 120_000),
    channelPollMs: integer(env, 'CHANNEL_POLL_MS', 60_000, 100, 86_400_000),
    setuMaxRps: integer(env, 'SETU_MAX_RPS', 20, 1, 100_000),
    cashfreeMaxRps: integer(env, 'CASHFREE_MAX_RPS', 100, 1, 100_000),
    liveMaxPayinPaise: amountSetting(env, 'LIVE_MAX_PAYIN', '100000.00'),
    liveMaxPayoutPaise: amountSetting(env, 'LIVE_MAX_PAYOUT', '500000.00'),
    channelStuckAfterS: integer(env, 'CHANNEL_STUCK_AFTER_S', 86_400, 1),
    notificationSilenceS: integer(env, 'NOTIFICATION_SILENCE_S', 3600, 1, 30 * 86_400),
    reconcileAtMinutes: reconcileAt(env),
    reconcileLookbackDays: integer(env, 'RECONCILE_LOOKBACK_DAYS', 7, 0, 90),
    channelResendAfterMs: integer(env, 'CHANNEL_RESEND_AFTER_S', 600, 0, 86_400) * 1000,
  });
}
