/**
 * The merchant wallet's double-entry ledger: each money movement is one journal whose entries add
 * up to zero, the wallet's `available` and `held` accounts on one side, an external account
 * (operator funding, customer pay-ins, fees, bank payouts) on the other. Wallet columns change in
 * the same database transaction as their entries.
 *
 * The movement functions take the caller's transaction: they are always one part of a larger
 * change (a payout record, a final status). Each writes its journal first and touches the wallet
 * row last, so that on PostgreSQL a busy wallet's row lock is held as briefly as possible. Payout
 * holds come in batches (`holdForPayouts`): the payout batch writer reads the balance under lock once
 * per batch and wallet, and the wallet row is updated once for the batch.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';
import { prefixedId } from '../ids.ts';
import { AppError } from '../errors.ts';
import { feeFor, toRupees } from '../money.ts';
import {
  addAvailable,
  insertJournal,
  insertJournals,
  lockAvailable,
  moveToHeldMany,
  type Journal,
  walletKey,
  type WalletKey,
  releaseHeld,
} from './wallet.repository.ts';

type Db = Kysely<Tables>;

/**
 * The accounts on the other side of the wallets' journals. Their sign is the outside world's: money
 * that came in is negative (`customer_payins`), money that went out positive (`bank_payouts`).
 * `suspense` holds customers' money that no pay-in may keep (positive while held); `receivable` is
 * what merchants owe back (negative while owed); `written_off` is what an operator dismissed.
 */
export const EXTERNAL = {
  funding: 'external:operator_funding',
  payins: 'external:customer_payins',
  fees: 'external:fees',
  payouts: 'external:bank_payouts',
  refunds: 'external:customer_refunds',
  receivable: 'external:receivable',
  suspense: 'external:suspense',
  writtenOff: 'external:written_off',
} as const;

/**
 * The most a balance may hold, in paise: 2^53 − 1, the largest integer a JSON number (and a
 * JavaScript one) carries exactly (docs/integration.md §3). A credit past it is refused.
 */
export const BALANCE_LIMIT = Number.MAX_SAFE_INTEGER;

export function balanceLimit(): AppError {
  return new AppError(
    'BALANCE_LIMIT',
    `The balance would exceed ${BALANCE_LIMIT} paise, the most it can hold exactly`,
    { limit: toRupees(BALANCE_LIMIT) },
  );
}

/** Operator top-up. */
export async function creditTopUp(
  db: Db,
  merchantId: string,
  currency: string,
  amount: number,
  at: number,
): Promise<void> {
  if (!(await addAvailable(db, merchantId, currency, amount, at, BALANCE_LIMIT))) throw balanceLimit();
  await insertJournal(
    db,
    {
      journalId: prefixedId('jnl'),
      kind: 'topup',
      merchantId,
      currency,
      paymentId: null,
      lines: [
        { account: 'available', amount },
        { account: EXTERNAL.funding, amount: -amount },
      ],
    },
    at,
  );
}

/** A payout or refund whose amount a batch holds. */
export interface Hold {
  merchantId: string;
  currency: string;
  amount: number;
  paymentId: string;
}

/**
 * Holds the amounts of accepted payouts: one journal per payout (all in one statement), then one
 * conditional update per wallet for its total (one statement too). The caller has read the
 * balances under lock (`lockAvailable`) and accepted only what they cover, so no update can fall
 * short unless that rule was broken; then this throws and the caller's transaction rolls back.
 */
export async function holdForPayouts(db: Db, holds: Hold[], at: number): Promise<void> {
  await holdMany(db, holds, 'payout_hold', at);
}

/** Holds the amounts of accepted refunds, as `holdForPayouts` does for payouts. */
export async function holdForRefunds(db: Db, holds: Hold[], at: number): Promise<void> {
  await holdMany(db, holds, 'refund_hold', at);
}

async function holdMany(db: Db, holds: Hold[], kind: string, at: number): Promise<void> {
  if (holds.length === 0) return;
  await insertJournals(
    db,
    holds.map((h) => ({
      journalId: prefixedId('jnl'),
      kind,
      merchantId: h.merchantId,
      currency: h.currency,
      paymentId: h.paymentId,
      lines: [
        { account: 'available', amount: -h.amount },
        { account: 'held', amount: h.amount },
      ],
    })),
    at,
  );
  const totals = new Map<string, WalletKey & { amount: number }>();
  for (const h of holds) {
    const key = walletKey(h);
    const move = totals.get(key);
    if (move) move.amount += h.amount;
    else totals.set(key, { merchantId: h.merchantId, currency: h.currency, amount: h.amount });
  }
  // The wallet rows last: on PostgreSQL they are locked already, and held until the commit.
  const moved = await moveToHeldMany(db, [...totals.values()], at);
  if (moved !== totals.size) {
    throw new Error(`available balance of ${totals.size - moved} wallet(s) does not cover the amounts held`);
  }
}

/** A transaction's final status, as the ledger sees it. */
export interface FinalMove {
  kind: 'payin' | 'payout' | 'refund';
  merchantId: string;
  currency: string;
  amount: number;
  paymentId: string;
  success: boolean;
}

/**
 * The money of final statuses settled together: a successful pay-in's amount less the fee becomes
 * available; a payout's or refund's held amount is paid out to the bank or the customer (SUCCESS)
 * or returns to available (FAILED). One
 * journal per transaction (all in one statement), then each wallet's total in one update. Several
 * wallets are first locked together in the database's order (`lockAvailable`, as the payout batches
 * do), so that two processes never lock two wallets in opposite orders. A failed pay-in moves nothing.
 */
export async function moveFinals(
  db: Db,
  locks: Pick<Database, 'lockRows'>,
  moves: FinalMove[],
  feeBps: number,
  at: number,
): Promise<void> {
  const journals: Journal[] = [];
  const totals = new Map<string, WalletKey & { credit: number; release: number; returned: number }>();
  for (const m of moves) {
    if (m.kind === 'payin' && !m.success) continue;
    const key = walletKey(m);
    let total = totals.get(key);
    if (!total) {
      total = { merchantId: m.merchantId, currency: m.currency, credit: 0, release: 0, returned: 0 };
      totals.set(key, total);
    }
    const journal = {
      journalId: prefixedId('jnl'),
      merchantId: m.merchantId,
      currency: m.currency,
      paymentId: m.paymentId,
    };
    if (m.kind === 'payin') {
      const fee = feeFor(m.amount, feeBps);
      const lines = [
        { account: 'available', amount: m.amount - fee },
        { account: EXTERNAL.payins, amount: -m.amount },
      ];
      if (fee > 0) lines.push({ account: EXTERNAL.fees, amount: fee });
      journals.push({ ...journal, kind: 'payin', lines });
      total.credit += m.amount - fee;
    } else {
      journals.push({
        ...journal,
        kind: `${m.kind}_${m.success ? 'success' : 'release'}`,
        lines: [
          { account: 'held', amount: -m.amount },
          m.success
            ? { account: m.kind === 'refund' ? EXTERNAL.refunds : EXTERNAL.payouts, amount: m.amount }
            : { account: 'available', amount: m.amount },
        ],
      });
      total.release += m.amount;
      if (!m.success) total.returned += m.amount;
    }
  }
  if (journals.length === 1) await insertJournal(db, journals[0]!, at);
  else await insertJournals(db, journals, at);
  // The wallet rows last: their locks are then held only until the commit.
  if (totals.size > 1) await lockAvailable(db, locks, [...totals.values()]);
  for (const t of totals.values()) {
    if (t.release > 0) await releaseHeld(db, t.merchantId, t.currency, t.release, t.returned, at);
    if (t.credit > 0 && !(await addAvailable(db, t.merchantId, t.currency, t.credit, at, BALANCE_LIMIT)))
      throw balanceLimit();
  }
}

/**
 * A payout the beneficiary's bank sent back after SUCCESS: the amount returns from the bank
 * payouts account to available.
 */
export async function reversePayout(
  db: Db,
  p: { merchantId: string; currency: string; amount: number; paymentId: string },
  at: number,
): Promise<void> {
  await insertJournal(
    db,
    {
      journalId: prefixedId('jnl'),
      kind: 'payout_reversal',
      merchantId: p.merchantId,
      currency: p.currency,
      paymentId: p.paymentId,
      lines: [
        { account: EXTERNAL.payouts, amount: -p.amount },
        { account: 'available', amount: p.amount },
      ],
    },
    at,
  );
  if (!(await addAvailable(db, p.merchantId, p.currency, p.amount, at, BALANCE_LIMIT))) throw balanceLimit();
}

/**
 * A merchant's refund recorded SUCCESS that its channel reports FAILED after all: the customer never
 * got it, and the amount returns from the customer refunds account to the merchant's available
 * balance, as a payout's reversal does.
 */
export async function reverseRefund(
  db: Db,
  p: { merchantId: string; currency: string; amount: number; paymentId: string },
  at: number,
): Promise<void> {
  await insertJournal(
    db,
    {
      journalId: prefixedId('jnl'),
      kind: 'refund_reversal',
      merchantId: p.merchantId,
      currency: p.currency,
      paymentId: p.paymentId,
      lines: [
        { account: EXTERNAL.refunds, amount: -p.amount },
        { account: 'available', amount: p.amount },
      ],
    },
    at,
  );
  if (!(await addAvailable(db, p.merchantId, p.currency, p.amount, at, BALANCE_LIMIT))) throw balanceLimit();
}

/**
 * A payout or refund Paygate recorded FAILED (its hold went back to available) that the provider
 * paid after all: the money left the provider account, and the merchant owes it back
 * (`external:receivable`, which an operator's `debit` clears). No wallet balance moves. With `back`,
 * the same money came back from the beneficiary's bank (a payout's REVERSED after it): the debt is
 * cancelled.
 */
export async function paidAfterFailed(
  db: Db,
  p: {
    kind: 'payout' | 'refund';
    merchantId: string;
    currency: string;
    amount: number;
    paymentId: string;
    back?: boolean;
  },
  at: number,
): Promise<void> {
  const sign = p.back ? -1 : 1;
  await insertJournal(
    db,
    {
      journalId: prefixedId('jnl'),
      kind: p.back ? `${p.kind}_receivable_reversal` : `${p.kind}_receivable`,
      merchantId: p.merchantId,
      currency: p.currency,
      paymentId: p.paymentId,
      lines: [
        { account: p.kind === 'payout' ? EXTERNAL.payouts : EXTERNAL.refunds, amount: sign * p.amount },
        { account: EXTERNAL.receivable, amount: -sign * p.amount },
      ],
    },
    at,
  );
}
