/**
 * The services behind the API, wired to one database. Kept apart from the HTTP app so that the
 * CLI can use them without loading the web stack.
 */
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { channelTurns, type TurnStore } from './db/channel-turns.ts';
import type { Channel } from './channels/channel.ts';
import type { ChannelObserver } from './channels/channel-http.ts';
import { CashfreeChannel } from './channels/cashfree/cashfree.channel.ts';
import { CashfreeNotifications } from './channels/cashfree/cashfree.notifications.ts';
import { SandboxChannel } from './channels/sandbox.channel.ts';
import { SetuChannel } from './channels/setu/setu.channel.ts';
import { SetuNotifications } from './channels/setu/setu.notifications.ts';
import { CallbackService } from './callbacks/callbacks.service.ts';
import { ChannelOutcomes } from './live/outcomes.ts';
import { NotificationService } from './live/notifications.service.ts';
import { ChannelSilence } from './live/silence.ts';
import { MerchantService } from './merchants/merchants.service.ts';
import { channelChoice } from './payments/channel-choice.ts';
import { PayinService } from './payins/payins.service.ts';
import { PayoutService } from './payouts/payouts.service.ts';
import { RefundService } from './refunds/refunds.service.ts';
import { SandboxService } from './sandbox/sandbox.service.ts';
import { FinalityService } from './finality/finality.service.ts';
import { WalletService } from './wallet/wallet.service.ts';
import { UnmatchedMoney } from './exceptions/unmatched.ts';
import { ExceptionService } from './exceptions/exceptions.service.ts';
import { exceptionJournalsCheck, exceptionsLedgerCheck } from './exceptions/ledger-check.ts';
import { DisputeDecisions } from './disputes/dispute-decisions.ts';
import { DisputeIntake } from './disputes/dispute-intake.ts';
import { disputesLedgerCheck } from './disputes/ledger-check.ts';
import { finalJournalsCheck } from './finality/ledger-check.ts';
import type { TransactionWorkerOptions } from './worker/transaction.worker.ts';
import { workerLeaseMs, type WorkerLogger } from './worker/worker-support.ts';

export interface Services {
  merchants: MerchantService;
  wallets: WalletService;
  payins: PayinService;
  payouts: PayoutService;
  refunds: RefundService;
  finality: FinalityService;
  sandbox: SandboxService;
  sandboxChannel: SandboxChannel;
  /** The live channels that are configured. */
  setu: SetuChannel | null;
  cashfree: CashfreeChannel | null;
  /** Every configured channel by name, for the worker. */
  channel(name: string): Channel | undefined;
  /** The names of the configured channels. */
  channelNames: string[];
  /** Sets where the live channels report each request (the app's metrics). */
  observeChannels(observer: ChannelObserver): void;
  outcomes: ChannelOutcomes;
  notifications: NotificationService;
  /** Each configured live channel's silence, and its `channel_silent` exception. */
  silence: ChannelSilence;
  callbacks: CallbackService;
  exceptions: ExceptionService;
}

export type LiveChannels = ReturnType<typeof liveChannels>;

/** The live channels whose settings are set. */
export function liveChannels(
  config: Config,
  now: () => number = Date.now,
  /** Where the cluster's turns to call each provider are kept (PostgreSQL); this process's own otherwise. */
  turns: TurnStore | null = null,
): { setu: SetuChannel | null; cashfree: CashfreeChannel | null } {
  const timing = { timeoutMs: config.channelTimeoutMs, pollMs: config.channelPollMs, turns };
  return {
    setu: config.setu ? new SetuChannel(config.setu, { ...timing, maxRps: config.setuMaxRps, now }) : null,
    cashfree: config.cashfree
      ? new CashfreeChannel(config.cashfree, { ...timing, maxRps: config.cashfreeMaxRps })
      : null,
  };
}

/** The live channels, when given, are used instead of those the settings make (the simulator's providers). */
export function buildServices(
  config: Config,
  database: Database,
  now = Date.now,
  live?: LiveChannels,
): Services {
  const { db } = database;
  const sandboxChannel = new SandboxChannel(config.sandboxPayoutSettleMs, now);
  const { setu, cashfree } = live ?? liveChannels(config, now, channelTurns(database));
  const byName = channelsByName([sandboxChannel, setu, cashfree]);
  const channelFor = channelChoice(sandboxChannel, {
    payin: setu,
    payout: cashfree,
    maxPayin: config.liveMaxPayinPaise,
    maxPayout: config.liveMaxPayoutPaise,
  });
  const finality = new FinalityService(database, {
    payinFeeBps: config.payinFeeBps,
    callbackMaxAttempts: 1 + config.callbackMaxRetries,
    now,
  });
  const outcomes = new ChannelOutcomes(
    db,
    finality,
    now,
    new UnmatchedMoney({
      autoRefund: config.autoRefundUnmatched,
      refunds: (name) => byName.get(name)?.refunds !== undefined,
      now,
    }),
  );
  const disputes = new DisputeDecisions(database);
  const notifications = new NotificationService(
    database,
    [
      new SetuNotifications(config.setu?.webhookSecret ?? null),
      new CashfreeNotifications(config.cashfree?.webhookSecret ?? null),
    ],
    outcomes,
    { now },
  );
  notifications.disputes = new DisputeIntake(disputes, now);
  return {
    merchants: new MerchantService(db, now, config.webhookSecretOverlapS, setu),
    wallets: new WalletService(db, now, [
      exceptionsLedgerCheck,
      exceptionJournalsCheck,
      finalJournalsCheck,
      disputesLedgerCheck,
    ]),
    payins: new PayinService(database, config, channelFor, now),
    payouts: new PayoutService(database, config, channelFor, now),
    refunds: new RefundService(database, config, (name) => byName.get(name), now),
    finality,
    sandbox: new SandboxService(db, sandboxChannel, finality),
    sandboxChannel,
    setu,
    cashfree,
    channel: (name) => byName.get(name),
    channelNames: [...byName.keys()],
    observeChannels(observer) {
      for (const c of [setu, cashfree]) if (c) c.http.observe = observer;
    },
    outcomes,
    notifications,
    silence: new ChannelSilence(
      db,
      [setu, cashfree].flatMap((c) => (c ? [c.name] : [])),
      config.notificationSilenceS * 1000,
      now,
    ),
    callbacks: new CallbackService(database, config, now),
    exceptions: new ExceptionService(
      database,
      (name) => byName.get(name)?.refunds !== undefined,
      now,
      disputes,
    ),
  };
}

/** The transaction worker's options over the services, as the app (and the simulator) run it. */
export function workerOptions(
  config: Config,
  services: Services,
  now: () => number,
  logger: WorkerLogger,
): TransactionWorkerOptions {
  return {
    pollMs: config.workerPollMs,
    now,
    logger,
    outcomes: services.outcomes,
    notifications: services.notifications,
    silence: services.silence,
    stuckAfterMs: config.channelStuckAfterS * 1000,
    leaseMs: workerLeaseMs(config.channelTimeoutMs),
    resendAfterMs: config.channelResendAfterMs,
    channelNames: services.channelNames,
  };
}

/** The configured channels by name. */
function channelsByName(channels: (Channel | null)[]): Map<string, Channel> {
  return new Map(channels.flatMap((c) => (c === null ? [] : [[c.name, c] as const])));
}
