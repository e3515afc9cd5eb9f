/**
 * Starts the real app on a real database for a test: `gateway()` gives a running Paygate with a
 * funded-or-not sandbox merchant, and helpers to call it the way a merchant would.
 */
import { after, before, describe } from 'node:test';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp, type Paygate } from '../../src/app.ts';
import type { Channel, VpaRegistry } from '../../src/channels/channel.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { migrate, openDatabase, type Database } from '../../src/db/database.ts';
import { AccountService } from '../../src/dashboard/accounts.service.ts';
import { base62 } from '../../src/ids.ts';
import { MerchantService, type CreatedMerchant } from '../../src/merchants/merchants.service.ts';
import { TransactionWorker } from '../../src/worker/transaction.worker.ts';
import { createDatabase, DATABASES, postgresSkip, type TestDatabase } from './databases.ts';

export interface Gateway {
  paygate: Paygate;
  app: FastifyInstance;
  config: Config;
  database: Database;
  testDb: TestDatabase;
  merchant: CreatedMerchant;
  /** Base URL when started with `listen: true`. */
  baseUrl: string;
  /** POST a JSON body with the merchant's key (or `key`), through Fastify's inject. */
  post(
    path: string,
    body?: unknown,
    opts?: { key?: string | null; headers?: Record<string, string> },
  ): Promise<Reply>;
  newMerchant(opts?: { live?: boolean; callbackUrl?: string }): Promise<CreatedMerchant>;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: any;
  text: string;
}

export interface GatewayOptions {
  env?: Record<string, string>;
  listen?: boolean;
  /** Start the background workers: the transaction worker (payout settlement, expiry) and the callback dispatcher. */
  worker?: boolean;
  now?: () => number;
  /** A logger for the app (pino); logging is off without one. */
  logger?: FastifyBaseLogger;
}

/** Starts a gateway on a fresh database of `kind`. */
export async function startGateway(kind: 'sqlite' | 'postgres', opts: GatewayOptions = {}): Promise<Gateway> {
  const testDb = await createDatabase(kind);
  const config = loadConfig({
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'silent',
    PORT: '0',
    ...opts.env,
    DATABASE_URL: testDb.url,
  });
  const database = openDatabase(config.databaseUrl);
  await migrate(database);
  const paygate = await buildApp({ config, database, logger: opts.logger ?? false, now: opts.now });
  const { app } = paygate;
  let baseUrl = '';
  if (opts.listen) {
    baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  } else {
    await app.ready();
  }
  if (opts.worker) {
    paygate.worker.start();
    paygate.dispatcher.start();
  }
  const merchant = await paygate.services.merchants.create({ name: 'Test Shop' });

  const post: Gateway['post'] = async (path, body, o = {}) => {
    const key = o.key === undefined ? merchant.api_key : o.key;
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await app.inject({ method: 'POST', url: path, headers, payload });
    let parsed: unknown = undefined;
    try {
      parsed = JSON.parse(res.body);
    } catch {
      parsed = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body: parsed, text: res.body };
  };

  return {
    paygate,
    app,
    config,
    database,
    testDb,
    merchant,
    baseUrl,
    post,
    newMerchant: (o = {}) =>
      (o.live ? registeredElsewhere(database, config) : paygate.services.merchants).create({
        name: 'Other Shop',
        live: o.live,
        vpa: o.live ? `other.${base62(8).toLowerCase()}@okaxis` : null,
        callbackUrl: o.callbackUrl,
      }),
    async close() {
      await paygate.worker.stop();
      await paygate.dispatcher.stop();
      await app.close();
      await database.close();
      await testDb.drop();
    },
  };
}

/**
 * Merchants made on `database` as while Setu was configured (every UPI id registered), for a
 * gateway that now runs without it: its live merchants' requests meet LIVE_CHANNEL_NOT_CONFIGURED.
 */
function registeredElsewhere(database: Database, config: Config): MerchantService {
  const setu: VpaRegistry = { register: async () => ({ routable: true, id: `vpa_${base62(12)}` }) };
  return new MerchantService(database.db, Date.now, config.webhookSecretOverlapS, setu);
}

/**
 * Registers before/after hooks that start a gateway for the enclosing describe block and returns
 * a getter for it. Call inside `describe(..., { skip }, () => { const gw = useGateway(kind); ... })`.
 */
export function useGateway(kind: 'sqlite' | 'postgres', opts: GatewayOptions = {}): () => Gateway {
  let gw: Gateway | undefined;
  before(async () => {
    gw = await startGateway(kind, opts);
  });
  after(async () => {
    await gw?.close();
  });
  return () => {
    if (!gw) throw new Error('gateway not started');
    return gw;
  };
}

/** The skip option for a describe block of `kind`: PostgreSQL is skipped when absent (never under CI). */
export async function skipFor(kind: 'sqlite' | 'postgres'): Promise<string | false> {
  return kind === 'postgres' ? postgresSkip() : false;
}

/**
 * `suite(kind)` for each database in one describe block named `name`, one database after the
 * other, each with gateways and fakes of its own: the live files' expiries, polls and one-second
 * channel timeouts keep to time only when the two do not share the machine's cores.
 */
export async function onEachDatabase(
  name: string,
  suite: (kind: 'sqlite' | 'postgres') => void,
): Promise<void> {
  const skips = { sqlite: await skipFor('sqlite'), postgres: await skipFor('postgres') };
  describe(name, () => {
    for (const kind of DATABASES) describe(`on ${kind}`, { skip: skips[kind] }, () => suite(kind));
  });
}

/**
 * The console's accounts over `db`, creating users whose passwords are hashed at scrypt N = 2^10
 * (about 1 ms) rather than the service's 2^15 (about 60 ms): the tests sign in some 350 times.
 */
export function testAccounts(db: Database['db'], now: () => number = Date.now): AccountService {
  return new AccountService(db, now, { N: 2 ** 10, r: 8, p: 1 });
}

/**
 * A transaction worker over the gateway's services that the test drives by `drain()` on its own
 * clock, as a second process would (the gateway's own worker runs only with `worker: true`).
 */
export function clockedWorker(
  g: Gateway,
  opts: {
    now: () => number;
    leaseMs: number;
    pollMs: number;
    /** The channels it may call (the gateway's, unless told). */
    channels?: (name: string) => Channel | undefined;
    /** The channels whose transactions it claims (the gateway's, unless told). */
    channelNames?: string[];
  },
): TransactionWorker {
  const { services } = g.paygate;
  return new TransactionWorker(g.database, opts.channels ?? services.channel, services.finality, {
    pollMs: opts.pollMs,
    now: opts.now,
    logger: { error() {}, warn() {}, info() {} },
    outcomes: services.outcomes,
    notifications: services.notifications,
    stuckAfterMs: 86_400_000,
    leaseMs: opts.leaseMs,
    resendAfterMs: g.paygate.config.channelResendAfterMs,
    channelNames: opts.channelNames ?? services.channelNames,
  });
}
