/**
 * The services behind the API, wired to one database. Kept apart from the HTTP app so that the
 * CLI can use them without loading the web stack.
 */
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { SandboxChannel } from './channels/sandbox.channel.ts';
import { CallbackService } from './callbacks/callbacks.service.ts';
import { MerchantService } from './merchants/merchants.service.ts';
import { sandboxOnly } from './payments/channel-choice.ts';
import { PayinService } from './payins/payins.service.ts';
import { PayoutService } from './payouts/payouts.service.ts';
import { SandboxService } from './sandbox/sandbox.service.ts';
import { SettlementService } from './transactions/settlement.service.ts';
import { WalletService } from './wallet/wallet.service.ts';

export interface Services {
  merchants: MerchantService;
  wallets: WalletService;
  payins: PayinService;
  payouts: PayoutService;
  settlement: SettlementService;
  sandbox: SandboxService;
  sandboxChannel: SandboxChannel;
  callbacks: CallbackService;
}

export function buildServices(config: Config, database: Database, now: () => number = Date.now): Services {
  const { db } = database;
  const sandboxChannel = new SandboxChannel(config.sandboxPayoutSettleMs, now);
  const channelFor = sandboxOnly(sandboxChannel);
  const settlement = new SettlementService(db, {
    payinFeeBps: config.payinFeeBps,
    callbackMaxAttempts: 1 + config.callbackMaxRetries,
    now,
  });
  return {
    merchants: new MerchantService(db, now),
    wallets: new WalletService(db, now),
    payins: new PayinService(database, config, channelFor, now),
    payouts: new PayoutService(database, config, channelFor, now),
    settlement,
    sandbox: new SandboxService(db, sandboxChannel, settlement),
    sandboxChannel,
    callbacks: new CallbackService(database, config, now),
  };
}
