/**
 * The journals of money that belongs to no transaction (CONTRACT §13): customers' money that no
 * pay-in may keep goes into `external:suspense` when it is seen and leaves it to the customer (a
 * refund), to a merchant (a credit) or as a write-off; a merchant's debt in `external:receivable`
 * is cleared from its available balance (a debit) or written off. Each function takes the caller's
 * transaction, in which the exception that holds the money is locked and updated too.
 */
import type { Kysely } from 'kysely';
import type { Tables, ExceptionHolds } from '../db/schema.ts';
import { prefixedId } from '../ids.ts';
import { addAvailable, insertJournal, takeAvailable, type LedgerLine } from './wallet.repository.ts';
import { BALANCE_LIMIT, balanceLimit, EXTERNAL } from './ledger.ts';

type Db = Kysely<Tables>;

/** Money of an exception: whose records it is kept with (`merchantId`, or "" for none), and what it names. */
export interface ExceptionMoney {
  merchantId: string | null;
  currency: string;
  amount: number;
  /** The transaction the journal names (the pay-in, the payout, the refund), if any. */
  paymentId: string | null;
}

function journal(db: Db, kind: string, m: ExceptionMoney, lines: LedgerLine[], at: number) {
  return insertJournal(
    db,
    {
      journalId: prefixedId('jnl'),
      kind,
      merchantId: m.merchantId ?? '',
      currency: m.currency,
      paymentId: m.paymentId,
      lines,
    },
    at,
  );
}

/** A customer's payment that no pay-in may keep, when it is seen. */
export function intoSuspense(db: Db, m: ExceptionMoney, at: number): Promise<void> {
  return journal(
    db,
    'suspense_in',
    m,
    [
      { account: EXTERNAL.payins, amount: -m.amount },
      { account: EXTERNAL.suspense, amount: m.amount },
    ],
    at,
  );
}

/** A refund from suspense recorded SUCCESS that its channel reports FAILED: the money is back in suspense. */
export function refundReturned(db: Db, m: ExceptionMoney, at: number): Promise<void> {
  return journal(
    db,
    'refund_returned',
    m,
    [
      { account: EXTERNAL.refunds, amount: -m.amount },
      { account: EXTERNAL.suspense, amount: m.amount },
    ],
    at,
  );
}

/** A refund from suspense that succeeded: the money went back to the customer. */
export function suspenseRefunded(db: Db, m: ExceptionMoney, at: number): Promise<void> {
  return journal(
    db,
    'suspense_refund',
    m,
    [
      { account: EXTERNAL.suspense, amount: -m.amount },
      { account: EXTERNAL.refunds, amount: m.amount },
    ],
    at,
  );
}

/** Money in suspense credited to a merchant's available balance. */
export async function suspenseToMerchant(
  db: Db,
  m: ExceptionMoney & { merchantId: string },
  at: number,
): Promise<void> {
  await journal(
    db,
    'suspense_credit',
    m,
    [
      { account: EXTERNAL.suspense, amount: -m.amount },
      { account: 'available', amount: m.amount },
    ],
    at,
  );
  if (!(await addAvailable(db, m.merchantId, m.currency, m.amount, at, BALANCE_LIMIT))) throw balanceLimit();
}

/**
 * Part or all of a merchant's debt taken from its available balance. The caller has read the balance
 * under lock and asks for no more than it holds; if it does not, this throws and the transaction rolls back.
 */
export async function receivableFromMerchant(
  db: Db,
  m: ExceptionMoney & { merchantId: string },
  at: number,
): Promise<void> {
  await journal(
    db,
    'receivable_debit',
    m,
    [
      { account: 'available', amount: -m.amount },
      { account: EXTERNAL.receivable, amount: m.amount },
    ],
    at,
  );
  if (!(await takeAvailable(db, m.merchantId, m.currency, m.amount, at)))
    throw new Error(
      `available balance of merchant ${m.merchantId} does not cover a debit of ${m.amount} paise`,
    );
}

/**
 * Money in suspense that was written off and then reached the customer after all (a refund from
 * suspense that the provider paid after it was recorded FAILED): the write-off is undone.
 */
export function writeOffRecovered(db: Db, m: ExceptionMoney, at: number): Promise<void> {
  return journal(
    db,
    'suspense_write_off_recovered',
    m,
    [
      { account: EXTERNAL.writtenOff, amount: -m.amount },
      { account: EXTERNAL.refunds, amount: m.amount },
    ],
    at,
  );
}

/** What an operator dismissed while it still held money: it leaves suspense or the receivable as written off. */
export function writeOff(db: Db, holds: ExceptionHolds, m: ExceptionMoney, at: number): Promise<void> {
  const lines =
    holds === 'suspense'
      ? [
          { account: EXTERNAL.suspense, amount: -m.amount },
          { account: EXTERNAL.writtenOff, amount: m.amount },
        ]
      : [
          { account: EXTERNAL.receivable, amount: m.amount },
          { account: EXTERNAL.writtenOff, amount: -m.amount },
        ];
  return journal(db, `${holds}_write_off`, m, lines, at);
}
