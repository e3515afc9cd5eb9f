/**
 * Refunds from suspense (CONTRACT §12, §13): customers' money that no pay-in may keep goes back to
 * the customer through the ordinary refund path, as a refund transaction that names no pay-in
 * (`refund_of` null, so it counts against no pay-in's refundable amount), has no merchant refund
 * number and no callback URL (no merchant callback), and is paid from suspense, not from a
 * merchant's balance. While it is in flight its exception keeps the money in suspense and takes no
 * other money action; it closes when the refund succeeds and stays open when the refund fails.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { newPaymentId } from '../ids.ts';
import { insertTransactions, type TransactionRow } from '../transactions/transactions.repository.ts';
import { newTransaction } from '../transactions/new-transaction.ts';
import { formatAmount } from '../money.ts';
import { paidAfterFailed } from '../wallet/ledger.ts';
import { suspenseRefunded, writeOffRecovered } from '../wallet/suspense.ledger.ts';
import {
  exceptionsOfRefunds,
  lockException,
  recordException,
  updateException,
  type ExceptionRow,
} from './exceptions.repository.ts';

/** The `merchant_order_no` of a refund from suspense begins so: it is no merchant's refund number. */
export const UNMATCHED_PREFIX = 'unmatched:';

/** Whether a refund is a refund from suspense (it names no pay-in). */
export function fromSuspense(txn: Pick<TransactionRow, 'kind' | 'refund_of'>): boolean {
  return txn.kind === 'refund' && txn.refund_of === null;
}

/**
 * Records the refund of an exception's money in suspense (PENDING, for the worker to hand to the
 * exception's channel) and marks the exception's money as in flight. The caller holds the exception
 * locked, has checked that it holds money and has no refund in flight, and names the merchant whose
 * records keep the refund. Until the refund is final, `resolved_by` says who asked for it.
 */
export async function startSuspenseRefund(
  tx: Kysely<Tables>,
  e: ExceptionRow,
  merchantId: string,
  /** Who asked for it: a user's email, `cli`, or `auto` (AUTO_REFUND_UNMATCHED). */
  by: string,
  at: number,
): Promise<string> {
  const refundId = newPaymentId();
  const row = newTransaction({
    payment_id: refundId,
    merchant_id: merchantId,
    kind: 'refund',
    flow: 'refund',
    merchant_order_no: `${UNMATCHED_PREFIX}${refundId}`,
    amount: e.outstanding,
    currency: e.currency,
    status: 'PENDING',
    channel: e.provider,
    request_hash: '',
    response_json: '{}',
    next_action_at: at,
    created_at: at,
    // No `refund_of`, no callback URL, and no provider's payment: the one it returns is the
    // exception's reference (`refund.step.ts` reads it there).
    reason: `unmatched payment ${e.reference} (exception ${e.id})`.slice(0, 100),
    exception_id: e.id,
  });
  await insertTransactions(tx, [row]);
  await updateException(tx, e.id, { refund_id: refundId, resolved_by: by });
  return refundId;
}

/**
 * Final statuses of refunds from suspense, inside the settlement's transaction: a SUCCESS moves the
 * money from suspense to the customer and closes the exception; a FAILED moves nothing and leaves
 * the exception open, its money in suspense, free for another action.
 */
export async function suspenseRefundsSettled(
  tx: Kysely<Tables>,
  refunds: TransactionRow[],
  at: number,
): Promise<void> {
  const mine = refunds.filter(fromSuspense);
  if (mine.length === 0) return;
  const byRefund = new Map(
    (
      await exceptionsOfRefunds(
        tx,
        mine.map((r) => r.payment_id),
      )
    ).map((e) => [e.refund_id!, e]),
  );
  for (const r of mine) {
    const e = byRefund.get(r.payment_id);
    if (r.status === 'SUCCESS') {
      await suspenseRefunded(
        tx,
        { merchantId: r.merchant_id, currency: r.currency, amount: r.amount, paymentId: r.payment_id },
        at,
      );
      if (e)
        await updateException(tx, e.id, {
          outstanding: Math.max(0, e.outstanding - r.amount),
          resolved_at: at,
          resolved_by: e.resolved_by ?? 'auto',
          resolution: 'refund',
        });
    } else if (e) await updateException(tx, e.id, { refund_id: null, resolved_by: null });
  }
}

/** The provider's payment a refund from suspense returns, and the pay-in it came for (if any). */
export async function unmatchedPayment(
  db: Kysely<Tables>,
  refundId: string,
): Promise<{ reference: string; paymentId: string } | null> {
  const row = await db
    .selectFrom('channel_exceptions')
    .select(['reference', 'payment_id'])
    .where('refund_id', '=', refundId)
    .executeTakeFirst();
  return row ? { reference: row.reference, paymentId: row.payment_id ?? '' } : null;
}

/** What a refund from suspense that the provider paid after it was recorded FAILED came to. */
export type LatePaid = 'refunded' | 'owed' | 'recovered' | 'seen';

/**
 * A refund from suspense recorded FAILED (its exception was freed) that the provider paid after all,
 * applied once: the caller holds the refund's row locked, and the `refund_after_failed` exception
 * opened here is the guard against a second application ('seen' then).
 *
 * - The exception still keeps the money in suspense, with no other refund in flight: the refund
 *   simply happened late. The money leaves suspense to the customer and the exception closes.
 * - The money was meanwhile credited to a merchant or refunded again: the customer was paid twice.
 *   The second outflow is journaled from `external:receivable`, owed by the merchant the exception
 *   names (the one credited), on the new exception, which a debit or a dismissal resolves.
 * - The money was written off: the write-off is recovered, since the customer got it.
 */
export async function suspenseRefundPaidLate(
  tx: Kysely<Tables>,
  refund: TransactionRow,
  utr: string,
  at: number,
): Promise<LatePaid> {
  const e = refund.exception_id === null ? undefined : await lockException(tx, Number(refund.exception_id));
  const pending =
    e !== undefined &&
    e.resolved_at === null &&
    e.holds === 'suspense' &&
    e.refund_id === null &&
    e.outstanding >= refund.amount;
  const writtenOff = e !== undefined && e.resolution === 'dismiss' && e.holds === 'suspense';
  const outcome: LatePaid = pending ? 'refunded' : writtenOff ? 'recovered' : 'owed';
  const merchantId = e?.merchant_id ?? refund.merchant_id;
  const opened = await recordException(
    tx,
    {
      kind: 'refund_after_failed',
      provider: refund.channel,
      paymentId: refund.payment_id,
      merchantId,
      currency: refund.currency,
      reference: refund.payment_id,
      amount: refund.amount,
      detail: lateDetail(outcome, refund, utr, e?.id),
      holds: outcome === 'owed' ? 'receivable' : null,
    },
    at,
  );
  if (opened === null) return 'seen';
  const money = {
    merchantId,
    currency: refund.currency,
    amount: refund.amount,
    paymentId: refund.payment_id,
  };
  if (outcome === 'owed') {
    await paidAfterFailed(tx, { kind: 'refund', ...money }, at);
    return outcome;
  }
  if (outcome === 'refunded') {
    await suspenseRefunded(tx, money, at);
    const rest = e!.outstanding - refund.amount;
    await updateException(
      tx,
      e!.id,
      rest > 0
        ? { outstanding: rest }
        : { outstanding: 0, resolved_at: at, resolved_by: 'channel', resolution: 'refund' },
    );
  } else await writeOffRecovered(tx, money, at);
  // Nothing is owed: the exception only tells the operator, and is closed.
  await updateException(tx, opened, { resolved_at: at, resolved_by: 'channel', resolution: outcome });
  return outcome;
}

function lateDetail(outcome: LatePaid, refund: TransactionRow, utr: string, exceptionId?: number): string {
  const paid = `the channel paid the customer ${formatAmount(refund.amount)} (utr ${utr || 'none'}) for a refund from suspense recorded FAILED`;
  const of = exceptionId === undefined ? 'its exception' : `exception ${exceptionId}`;
  if (outcome === 'refunded') return `${paid}; ${of} still held the money, which now left suspense`;
  if (outcome === 'recovered') return `${paid}; ${of} had written the money off, which is now recovered`;
  return `${paid}, after ${of} had credited or refunded it again: the second payment is owed back`;
}
