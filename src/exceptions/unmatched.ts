/**
 * Money an exception holds from the moment it is opened (CONTRACT §13): a customer's payment that
 * no pay-in may keep is journaled into suspense and, with AUTO_REFUND_UNMATCHED, its refund is
 * recorded in the same transaction (`suspense-refunds.ts`); a payout paid after FAILED that the
 * bank then returned cancels what its merchant owed and gives back what was debited already.
 */
import { sql, type Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { lockException, updateException } from './exceptions.repository.ts';
import { prefixedId } from '../ids.ts';
import { addAvailable, insertJournal } from '../wallet/wallet.repository.ts';
import { intoSuspense, refundReturned } from '../wallet/suspense.ledger.ts';
import { startSuspenseRefund } from './suspense-refunds.ts';
import { BALANCE_LIMIT, balanceLimit, EXTERNAL } from '../wallet/ledger.ts';

/** Where money an exception holds in suspense came from: a customer's payment, or a refund the channel returned. */
export type SuspenseSource = 'suspense_in' | 'refund_returned';

export interface UnmatchedOptions {
  /** AUTO_REFUND_UNMATCHED */
  autoRefund: boolean;
  /** Whether the named channel can refund its payments. */
  refunds(channel: string): boolean;
  now: () => number;
}

export class UnmatchedMoney {
  constructor(private readonly options: UnmatchedOptions) {}

  /**
   * An exception that holds customers' money was just opened (in the caller's transaction): the
   * money goes into suspense and, when automatic refunds are on and its channel can refund it, back
   * to the customer. A refund needs a merchant whose records keep it; without one the money waits
   * for the operator.
   */
  async suspended(
    tx: Kysely<Tables>,
    exceptionId: number,
    from: SuspenseSource = 'suspense_in',
  ): Promise<void> {
    const e = await lockException(tx, exceptionId);
    if (!e || e.holds !== 'suspense' || e.outstanding <= 0) return;
    const at = this.options.now();
    const money = {
      merchantId: e.merchant_id,
      currency: e.currency,
      amount: e.outstanding,
      paymentId: e.payment_id,
    };
    await (from === 'refund_returned' ? refundReturned(tx, money, at) : intoSuspense(tx, money, at));
    if (this.options.autoRefund && e.merchant_id !== null && this.options.refunds(e.provider))
      await startSuspenseRefund(tx, e, e.merchant_id, 'auto', at);
  }
}

/**
 * A payout paid after FAILED came back from the beneficiary's bank: of its amount, what the merchant
 * still owed is no longer owed, what was debited from the merchant goes back to its available
 * balance, and what was written off is recovered. Its exception closes.
 */
export async function receivableReversed(tx: Kysely<Tables>, exceptionId: number, at: number): Promise<void> {
  const e = await lockException(tx, exceptionId);
  if (!e || e.holds !== 'receivable' || e.amount === null || e.merchant_id === null) return;
  const moved = await sql<{ kind: string; total: string }>`
    select kind, cast(sum(amount) as text) as total from ledger_entries
    where payment_id = ${e.payment_id} and kind in ('receivable_debit', 'receivable_write_off')
      and account = ${EXTERNAL.receivable}
    group by kind`.execute(tx);
  const sumOf = (kind: string) => Number(moved.rows.find((r) => r.kind === kind)?.total ?? 0);
  const debited = sumOf('receivable_debit');
  const writtenOff = sumOf('receivable_write_off');
  const lines = (other: string, amount: number) => [
    { account: EXTERNAL.payouts, amount: -amount },
    { account: other, amount },
  ];
  const journal = (kind: string, other: string, amount: number) =>
    amount > 0
      ? insertJournal(
          tx,
          {
            journalId: prefixedId('jnl'),
            kind,
            merchantId: e.merchant_id!,
            currency: e.currency,
            paymentId: e.payment_id,
            lines: lines(other, amount),
          },
          at,
        )
      : Promise.resolve();
  await journal('payout_receivable_reversal', EXTERNAL.receivable, e.outstanding);
  await journal('payout_receivable_returned', 'available', debited);
  await journal('payout_receivable_recovered', EXTERNAL.writtenOff, writtenOff);
  if (debited > 0 && !(await addAvailable(tx, e.merchant_id, e.currency, debited, at, BALANCE_LIMIT)))
    throw balanceLimit();
  await updateException(tx, e.id, {
    outstanding: 0,
    ...(e.resolved_at === null ? { resolved_at: at, resolved_by: 'channel', resolution: 'reversed' } : {}),
  });
}
