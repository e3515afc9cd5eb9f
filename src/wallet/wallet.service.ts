/**
 * The merchant wallet as merchants and operators see it: its balance, an operator's top-up, and
 * `paygate ledger verify`, which checks every journal and wallet against the entries (the ledger's
 * movements are in `ledger.ts`).
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import {
  countJournals,
  findWallet,
  exactWallets,
  unbalancedJournals,
  walletAccountSums,
} from './wallet.repository.ts';
import { BALANCE_LIMIT, creditTopUp } from './ledger.ts';

export interface Balance {
  currency: string;
  /** paise */
  available: number;
  /** paise */
  held: number;
}

export interface LedgerReport {
  ok: boolean;
  journals: number;
  wallets: number;
  problems: string[];
}

type Db = Kysely<Tables>;

/**
 * A check of the ledger that another part owns (the exceptions' money against suspense and the
 * receivable): the problems it finds, read inside `verify`'s snapshot.
 */
export type LedgerCheck = (db: Db) => Promise<string[]>;

export class WalletService {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
    /** Checks run by `verify` after the wallets' own, in the same snapshot. */
    private readonly checks: readonly LedgerCheck[] = [],
  ) {}

  async balance(merchantId: string, currency: string): Promise<Balance> {
    const wallet = await findWallet(this.db, merchantId, currency);
    return { currency, available: wallet?.available ?? 0, held: wallet?.held ?? 0 };
  }

  async topUp(merchantId: string, currency: string, amount: number): Promise<Balance> {
    await this.db.transaction().execute((tx) => creditTopUp(tx, merchantId, currency, amount, this.now()));
    return this.balance(merchantId, currency);
  }

  /**
   * Checks that every journal balances and that every wallet equals the sum of its entries. All of
   * it is read in one snapshot: a payment settling meanwhile must not show as a difference between
   * two reads (on SQLite a transaction is one snapshot whatever its level).
   */
  verify(): Promise<LedgerReport> {
    return this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute((tx) => this.verifyIn(tx));
  }

  private async verifyIn(db: Db): Promise<LedgerReport> {
    const problems: string[] = [];
    for (const j of await unbalancedJournals(db)) {
      problems.push(`journal ${j.journal_id} does not balance: entries add up to ${j.total} paise`);
    }
    // Sums and balances as BigInt: a drift past 2^53 would vanish in a JavaScript number.
    const sums = new Map<string, bigint>();
    for (const s of await walletAccountSums(db))
      sums.set(`${s.merchant_id}/${s.currency}/${s.account}`, s.total);
    const wallets = await exactWallets(db);
    const seen = new Set<string>();
    for (const w of wallets) {
      for (const account of ['available', 'held'] as const) {
        const key = `${w.merchant_id}/${w.currency}/${account}`;
        seen.add(key);
        const ledger = sums.get(key) ?? 0n;
        if (ledger !== w[account]) {
          problems.push(
            `wallet ${w.merchant_id} ${w.currency} ${account} is ${w[account]} paise but its entries add up to ${ledger}`,
          );
        }
        if (w[account] > BigInt(BALANCE_LIMIT))
          problems.push(`wallet ${w.merchant_id} ${w.currency} ${account} is past the balance limit`);
      }
    }
    for (const [key, total] of sums) {
      if (!seen.has(key) && total !== 0n)
        problems.push(`entries for ${key} add up to ${total} paise but there is no such wallet`);
    }
    for (const check of this.checks) problems.push(...(await check(db)));
    return {
      ok: problems.length === 0,
      journals: await countJournals(db),
      wallets: wallets.length,
      problems,
    };
  }
}
