/**
 * A transaction's reads that failed in a row (`read_failures`): counted as each is given back to
 * be read again later, so that the wait doubles whichever process reads it next; cleared by the
 * first read that does not fail.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';

/** Gives back a transaction whose read failed, to be read again at `nextActionAt`, with its count of failed reads. */
export async function rescheduleFailedRead(
  db: Kysely<Tables>,
  paymentId: string,
  nextActionAt: number,
  readFailures: number,
): Promise<void> {
  await db
    .updateTable('transactions')
    .set({ next_action_at: nextActionAt, lease_until: null, read_failures: readFailures })
    .where('payment_id', '=', paymentId)
    .where('status', 'in', ['PENDING', 'PROCESSING'])
    .execute();
}

/** A read of the transaction did not fail: the next failure waits from the start again. */
export async function clearReadFailures(db: Kysely<Tables>, paymentId: string): Promise<void> {
  await db
    .updateTable('transactions')
    .set({ read_failures: 0 })
    .where('payment_id', '=', paymentId)
    .where('read_failures', '>', 0)
    .execute();
}
