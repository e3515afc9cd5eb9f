/**
 * A channel's outcome that found its transaction final already: the same outcome again changes
 * nothing; one that contradicts the final status is kept for the operator, and moves money only
 * where the contract says (a payout's reversal, a payout or refund paid after FAILED). Each rule
 * applies once: the exception's insert is the guard.
 *
 * A final status and its utr never change once written, so a row the caller read final already is
 * what the table holds, and a report that agrees with it needs no second look. Payouts and refunds
 * whose report may move money lock their row first, so that two reports applied at once (a
 * SUCCESS and a REVERSED) see each other.
 */
import type { Kysely } from 'kysely';
import type { FinalOutcome, PayoutState } from '../channels/channel.ts';
import type { Tables } from '../db/schema.ts';
import { formatAmount } from '../money.ts';
import type { FinalityService } from '../finality/finality.service.ts';
import { fillUtr, insertEvents, type TransactionRow } from '../transactions/transactions.repository.ts';
import { receivableReversed } from '../exceptions/unmatched.ts';
import { suspenseRefundPaidLate } from '../exceptions/suspense-refunds.ts';
import { paidAfterFailed, reverseRefund } from '../wallet/ledger.ts';
import type { OutcomeExceptions, Scope } from './outcome-exceptions.ts';

export class AfterFinal {
  constructor(
    private readonly finality: Pick<FinalityService, 'reverseIn'>,
    private readonly exceptions: OutcomeExceptions,
    private readonly now: () => number,
  ) {}

  /** A pay-in's outcome: the same payment again changes nothing; another one is kept, its money in suspense. */
  async payin(s: Scope, txn: TransactionRow, outcome: FinalOutcome): Promise<void> {
    if (outcome.status !== 'SUCCESS') return;
    const now = isFinal(txn)
      ? txn
      : await s.tx
          .selectFrom('transactions')
          .selectAll()
          .where('payment_id', '=', txn.payment_id)
          .executeTakeFirst();
    if (!now) return;
    if (now.status === 'SUCCESS' && samePayment(now, outcome)) {
      // The payment that settled it, reported again; a bank reference first reported without one
      // is kept now that it is known.
      if (now.utr === '' && outcome.utr !== '') await fillUtr(s.tx, now.payment_id, outcome.utr);
      return;
    }
    await this.exceptions.of(s, now, {
      kind: 'payment_after_final',
      reference: outcome.reference || outcome.utr || txn.payment_id,
      amount: outcome.amount ?? null,
      detail: `a payment (utr ${outcome.utr || 'none'}) came for a pay-in already ${now.status}`,
      holds: 'suspense',
    });
  }

  /**
   * A payout's state. After SUCCESS: a reversal returns the money and tells the merchant; a
   * failure is an exception. After FAILED (the hold went back to the merchant): see `payoutAfterFailed`.
   */
  async payout(s: Scope, txn: TransactionRow, state: PayoutState, source: string): Promise<void> {
    const outcome = state.outcome;
    if (!outcome || (!state.reversed && agrees(txn, outcome))) return;
    const now = await lock(s.tx, txn.payment_id);
    if (now?.status === 'SUCCESS') await this.payoutAfterSuccess(s, now, state, source);
    else if (now?.status === 'FAILED') await this.payoutAfterFailed(s, now, state, source);
  }

  private async payoutAfterSuccess(
    s: Scope,
    now: TransactionRow,
    state: PayoutState,
    source: string,
  ): Promise<void> {
    const id = now.payment_id;
    if (state.reversed) {
      const reversed = await this.finality.reverseIn(s.tx, id, source);
      if (!reversed) return;
      s.settled.push(reversed);
      await this.exceptions.of(s, now, {
        kind: 'reversal',
        reference: id,
        amount: now.amount,
        detail: `the payout's ${formatAmount(now.amount)} came back after SUCCESS (utr ${now.utr || 'none'}) and is available again`,
      });
    } else if (state.outcome?.status === 'FAILED')
      await this.exceptions.of(s, now, {
        kind: 'status_mismatch',
        reference: id,
        amount: now.amount,
        detail: 'the channel reports FAILED for a payout recorded SUCCESS',
      });
  }

  /**
   * After FAILED: a SUCCESS means the money left after all: an exception, and the amount is
   * journaled as owed by the merchant (`external:receivable`); a REVERSED is an exception and, if
   * such a SUCCESS was journaled, cancels that debt.
   */
  private async payoutAfterFailed(
    s: Scope,
    now: TransactionRow,
    state: PayoutState,
    source: string,
  ): Promise<void> {
    const id = now.payment_id;
    if (state.reversed) {
      const opened = await this.exceptions.of(s, now, {
        kind: 'reversal_after_failed',
        reference: id,
        amount: now.amount,
        detail: 'the channel reports REVERSED for a payout recorded FAILED',
      });
      if (opened === null) return;
      await insertEvents(
        s.tx,
        [{ paymentId: id, status: 'FAILED', source: `${source}:reversed` }],
        this.now(),
      );
      const owed = await s.tx
        .selectFrom('channel_exceptions')
        .select('id')
        .where('kind', '=', 'payout_after_failed')
        .where('provider', '=', now.channel)
        .where('reference', '=', id)
        .where('holds', '=', 'receivable')
        .executeTakeFirst();
      if (owed) await receivableReversed(s.tx, Number(owed.id), this.now());
    } else if (state.outcome?.status === 'SUCCESS') {
      // A REVERSED seen first (it failed the payout, or came after FAILED) means the money came back.
      const holds = (await reversalSeen(s.tx, id)) ? null : 'receivable';
      const opened = await this.exceptions.of(s, now, {
        kind: 'payout_after_failed',
        reference: id,
        amount: now.amount,
        detail: `the channel paid ${formatAmount(now.amount)} (utr ${state.outcome.utr || 'none'}) for a payout recorded FAILED, whose hold went back to the merchant`,
        holds,
      });
      if (opened !== null && holds) await paidAfterFailed(s.tx, moneyOf(now, 'payout'), this.now());
    }
  }

  /**
   * A refund's outcome: one that contradicts the final status recorded is an exception. A SUCCESS
   * after FAILED (the hold went back to the merchant, but the customer was paid) is owed by the
   * merchant, as a payout's is: `refund_after_failed`, journaled once to `external:receivable`. A
   * refund from suspense paid late is weighed against its exception (`suspenseRefundPaidLate`).
   */
  async refund(s: Scope, txn: TransactionRow, outcome: FinalOutcome): Promise<void> {
    if (agrees(txn, outcome)) return;
    const now = await lock(s.tx, txn.payment_id);
    if (now?.status === 'FAILED' && outcome.status === 'SUCCESS' && txn.refund_of) {
      const opened = await this.exceptions.of(s, txn, {
        kind: 'refund_after_failed',
        reference: txn.payment_id,
        amount: txn.amount,
        detail: `the channel paid the customer ${formatAmount(txn.amount)} (utr ${outcome.utr || 'none'}) for a refund recorded FAILED, whose hold went back to the merchant`,
        holds: 'receivable',
      });
      if (opened !== null) await paidAfterFailed(s.tx, moneyOf(txn, 'refund'), this.now());
    } else if (now?.status === 'FAILED' && outcome.status === 'SUCCESS' && now.exception_id !== null)
      // A refund from suspense: its money is weighed against what its exception did meanwhile.
      await suspenseRefundPaidLate(s.tx, now, outcome.utr, this.now());
    else if (now?.status === 'SUCCESS' && outcome.status === 'FAILED') await this.refundReturned(s, now);
    else if (now && isFinal(now) && now.status !== outcome.status)
      await this.exceptions.of(s, txn, {
        kind: 'status_mismatch',
        reference: txn.payment_id,
        amount: txn.amount,
        detail: `the channel reports ${outcome.status} for a refund recorded ${now.status}`,
      });
  }

  /**
   * A refund recorded SUCCESS that the channel reports FAILED: the customer never got the money,
   * which is back in Paygate's provider account. A merchant's refund returns it to the merchant's
   * available balance, as a payout's reversal does (the status stays SUCCESS); a refund from
   * suspense puts it back in suspense, on an exception of its own. Once: the exception is the guard.
   */
  private async refundReturned(s: Scope, now: TransactionRow): Promise<void> {
    const amount = formatAmount(now.amount);
    if (now.refund_of === null) {
      await this.exceptions.of(s, now, {
        kind: 'refund_returned',
        reference: now.payment_id,
        amount: now.amount,
        detail: `the channel reports FAILED for a refund from suspense recorded SUCCESS: its ${amount} is back in suspense`,
        holds: 'suspense',
        journal: 'refund_returned',
      });
      return;
    }
    const opened = await this.exceptions.of(s, now, {
      kind: 'reversal',
      reference: now.payment_id,
      amount: now.amount,
      detail: `the channel reports FAILED for a refund recorded SUCCESS: its ${amount} is available to the merchant again`,
    });
    if (opened !== null) await reverseRefund(s.tx, moneyOf(now, 'refund'), this.now());
  }
}

/**
 * Whether a reported payment is the one that settled the pay-in. A provider that names its payments
 * is believed by that name alone (CONTRACT §10, provider identities: one payment id is one payment
 * whatever its bank reference says or lacks); otherwise the bank reference decides.
 */
function samePayment(txn: TransactionRow, outcome: FinalOutcome): boolean {
  const reported = outcome.payment?.id || outcome.reference || '';
  if (reported !== '' && txn.channel_payment_id) return reported === txn.channel_payment_id;
  return txn.utr === outcome.utr;
}

function isFinal(txn: TransactionRow): boolean {
  return txn.status === 'SUCCESS' || txn.status === 'FAILED';
}

/** Whether the row, read final already, has the status the outcome reports: nothing to weigh then. */
function agrees(txn: TransactionRow, outcome: FinalOutcome): boolean {
  return isFinal(txn) && txn.status === outcome.status;
}

/** The transaction's row, locked (on PostgreSQL) until the commit. */
function lock(tx: Kysely<Tables>, paymentId: string): Promise<TransactionRow | undefined> {
  return tx
    .updateTable('transactions')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('payment_id', '=', paymentId)
    .returningAll()
    .executeTakeFirst();
}

/** Whether the payout's history holds a REVERSED the channel reported. */
async function reversalSeen(tx: Kysely<Tables>, paymentId: string): Promise<boolean> {
  const row = await tx
    .selectFrom('transaction_events')
    .select('id')
    .where('payment_id', '=', paymentId)
    .where('source', 'like', '%:reversed')
    .executeTakeFirst();
  return row !== undefined;
}

/** A payout's or refund's money, as the ledger journals what its merchant owes. */
function moneyOf(txn: TransactionRow, kind: 'payout' | 'refund') {
  return {
    kind,
    merchantId: txn.merchant_id,
    currency: txn.currency,
    amount: txn.amount,
    paymentId: txn.payment_id,
  };
}
