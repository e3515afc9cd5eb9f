/**
 * SQL for a payout's transfers that the provider failed for Paygate's own account (CONTRACT §10):
 * the payout waits PENDING with its hold, parked on the `channel_account` exception, and the failed
 * transfer is kept beside it (`payout_transfers`); once the exception is resolved, each payout
 * parked on it is due at once under its next transfer id (`transfer_attempt` + 1).
 */
import { sql, type Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';

/** A transfer of a payout that the provider failed for the account. */
export interface AccountFailedTransfer {
  paymentId: string;
  attempt: number;
  transferId: string;
  channelTxnId: string;
  status: string;
  statusCode: string;
  exceptionId: number;
}

/**
 * Parks a payout on its exception: PENDING, due never, while its current transfer is still the one
 * that failed (a report of an earlier transfer changes nothing), and keeps the failed transfer
 * (once). Answers whether the payout was parked.
 */
export async function parkPayout(tx: Kysely<Tables>, t: AccountFailedTransfer, at: number): Promise<boolean> {
  const parked = await tx
    .updateTable('transactions')
    .set({ status: 'PENDING', next_action_at: null, lease_until: null })
    .where('payment_id', '=', t.paymentId)
    .where('kind', '=', 'payout')
    .where('status', 'in', ['PENDING', 'PROCESSING'])
    .where('transfer_attempt', '=', t.attempt)
    .executeTakeFirst();
  if (Number(parked.numUpdatedRows) === 0) return false;
  await tx
    .insertInto('payout_transfers')
    .values({
      payment_id: t.paymentId,
      attempt: t.attempt,
      transfer_id: t.transferId,
      channel_txn_id: t.channelTxnId,
      status: t.status,
      status_code: t.statusCode,
      exception_id: t.exceptionId,
      recorded_at: at,
    })
    .onConflict((oc) => oc.columns(['payment_id', 'attempt']).doNothing())
    .execute();
  return true;
}

/**
 * Makes every payout parked on the exception due now under its next transfer: a new transfer id,
 * no sends of it yet, nothing known of it at the provider. Answers their payment_ids.
 */
export async function resendParked(tx: Kysely<Tables>, exceptionId: number, at: number): Promise<string[]> {
  const rows = await tx
    .updateTable('transactions')
    .set({
      transfer_attempt: sql<number>`transfer_attempt + 1`,
      status: 'PENDING',
      submit_attempts: 0,
      not_found_at: null,
      channel_txn_id: '',
      next_action_at: at,
      lease_until: null,
      updated_at: at,
    })
    .where('status', 'in', ['PENDING', 'PROCESSING'])
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('payout_transfers as p')
          .select('p.attempt')
          .where('p.exception_id', '=', exceptionId)
          .whereRef('p.payment_id', '=', 'transactions.payment_id')
          .whereRef('p.attempt', '=', 'transactions.transfer_attempt'),
      ),
    )
    .returning('payment_id')
    .execute();
  return rows.map((r) => r.payment_id);
}

/** A payout's transfers failed for the account, in order (for the console and tests). */
export async function failedTransfers(db: Kysely<Tables>, paymentId: string) {
  const rows = await db
    .selectFrom('payout_transfers')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .orderBy('attempt')
    .execute();
  return rows.map((r) => ({ ...r, attempt: Number(r.attempt), exception_id: Number(r.exception_id) }));
}
