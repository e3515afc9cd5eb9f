/**
 * One simulated world: a database, the real services built over it on a simulated clock, the
 * simulated providers and merchants' receivers, and the worker and callback dispatcher driven one
 * round at a time. A crash abandons the services (in-flight promises included) and builds them again
 * over the same database.
 */
import { generateKeyPairSync } from 'node:crypto';
import { Registry } from 'prom-client';
import type { CashfreeChannel } from '../src/channels/cashfree/cashfree.channel.ts';
import type { SetuChannel } from '../src/channels/setu/setu.channel.ts';
import { loadConfig, type Config } from '../src/config.ts';
import type { Database } from '../src/db/database.ts';
import type { Principal } from '../src/merchants/merchants.service.ts';
import { ReconcileService } from '../src/reconcile/reconcile.service.ts';
import { buildServices, workerOptions, type Services } from '../src/services.ts';
import { CallbackDispatcher } from '../src/worker/callback.dispatcher.ts';
import { TransactionWorker } from '../src/worker/transaction.worker.ts';
import { workerLeaseMs } from '../src/worker/worker-support.ts';
import { SimCashfree } from './cashfree.ts';
import type { Faults } from './faults.ts';
import { NoticeQueue } from './notices.ts';
import { Receivers } from './receivers.ts';
import { SimSetu } from './setu.ts';
import type { Store } from './sqlite-store.ts';

export const SETU_SECRET = 'sim-setu-webhook-secret';
export const CASHFREE_SECRET = 'sim-cashfree-webhook-secret';
/** 10:00 IST on a weekday: where every history's clock starts. */
export const START_AT = Date.UTC(2026, 10, 27, 4, 30);

let publicKey: string | null = null;

/** The settings of every history: both live channels configured (their calls go to the simulated providers). */
export function simConfig(databaseUrl: string, autoRefund: boolean): Config {
  publicKey ??= generateKeyPairSync('rsa', { modulusLength: 1024 })
    .publicKey.export({ type: 'spki', format: 'pem' })
    .toString();
  return loadConfig({
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    PORT: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    PAYIN_FEE_BPS: '150',
    AUTO_REFUND_UNMATCHED: String(autoRefund),
    PAYIN_EXPIRY_S: '900',
    CHANNEL_POLL_MS: '60000',
    CALLBACK_MAX_RETRIES: '3',
    CALLBACK_RETRY_INTERVAL_MS: '30000',
    SANDBOX_PAYOUT_SETTLE_MS: '2000',
    SETU_BASE_URL: 'https://setu.sim.invalid',
    SETU_AUTH_URL: 'https://setu.sim.invalid',
    SETU_CLIENT_ID: 'sim',
    SETU_CLIENT_SECRET: 'sim',
    SETU_MERCHANT_ID: 'sim',
    SETU_WEBHOOK_SECRET: SETU_SECRET,
    CASHFREE_BASE_URL: 'https://cashfree.sim.invalid',
    CASHFREE_CLIENT_ID: 'sim',
    CASHFREE_CLIENT_SECRET: 'sim',
    CASHFREE_WEBHOOK_SECRET: CASHFREE_SECRET,
    CASHFREE_PUBLIC_KEY: publicKey,
  });
}

const quiet = { error() {}, warn() {}, info() {}, debug() {}, trace() {}, fatal() {} };

export interface Merchant {
  id: string;
  principal: Principal;
  live: boolean;
  topUps: number;
}

export class World {
  readonly clock = { t: START_AT };
  readonly now = () => this.clock.t;
  readonly notices = new NoticeQueue();
  readonly receivers = new Receivers();
  readonly setu: SimSetu;
  readonly cashfree: SimCashfree;
  readonly merchants: Merchant[] = [];
  /** What operators credited to each merchant out of exceptions. */
  readonly credited = new Map<string, number>();
  /** What each exception's `debit`s took from its merchant, by exception id. */
  readonly debitedOn = new Map<number, { merchantId: string; amount: number }>();
  services!: Services;
  worker!: TransactionWorker;
  dispatcher!: CallbackDispatcher;
  reconcile!: ReconcileService;
  /** Promises of the services before the last crash: their outcomes are ignored. */
  generation = 0;

  constructor(
    readonly config: Config,
    readonly faults: Faults,
    public database: Database,
    private readonly store: Store,
  ) {
    this.setu = new SimSetu(faults, this.notices, SETU_SECRET, this.now, config.channelPollMs);
    this.cashfree = new SimCashfree(faults, this.notices, CASHFREE_SECRET, this.now, config.channelPollMs);
  }

  /** Builds the services over the database (again after a crash). */
  open(): void {
    this.generation++;
    const { config, now } = this;
    const live = {
      setu: this.setu as unknown as SetuChannel,
      cashfree: this.cashfree as unknown as CashfreeChannel,
    };
    const services = buildServices(config, this.database, now, live);
    this.services = services;
    this.worker = new TransactionWorker(
      this.database,
      services.channel,
      services.finality,
      workerOptions(config, services, now, quiet),
    );
    this.reconcile = new ReconcileService(this.database.db, live, services.outcomes, {
      now,
      concurrency: 4,
      readTries: 2,
      retryMs: 0,
    });
    this.dispatcher = new CallbackDispatcher(this.database, config, {
      registry: new Registry(),
      logger: quiet,
      now,
      sender: this.receivers,
    });
  }

  /** Two merchants, one sandbox and one live, each funded. */
  async createMerchants(): Promise<void> {
    for (const live of [false, true]) {
      const created = await this.services.merchants.create({
        name: live ? 'Live Shop' : 'Sandbox Shop',
        live,
        vpa: live ? 'shop.live@pineaxis' : null,
        callbackUrl: `https://${live ? 'live' : 'sandbox'}.shop.example/callback`,
      });
      const principal = await this.services.merchants.authenticate(created.api_key);
      if (!principal) throw new Error('a merchant just made cannot sign in');
      const topUps = 5_000_00;
      await this.services.wallets.topUp(created.merchant_id, 'INR', topUps);
      this.merchants.push({ id: created.merchant_id, principal, live, topUps });
      this.credited.set(created.merchant_id, 0);
    }
  }

  /** Every in-flight promise abandoned: the database handle closed under them, the services built anew. */
  async crash(): Promise<void> {
    const old = this.database;
    await old.close().catch(() => {});
    this.database = this.store.reopen();
    this.open();
    // Leases of the abandoned process run out before another process takes its rows up.
    this.clock.t += workerLeaseMs(this.config.channelTimeoutMs) + 60_000;
  }
}
