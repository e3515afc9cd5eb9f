/** The callback outbox: one delivery row per final status, written in the final-status transaction. */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { prefixedId } from '../ids.ts';

export async function enqueueDelivery(
  db: Kysely<Tables>,
  d: { paymentId: string; merchantId: string; url: string; body: string; maxAttempts: number },
  at: number,
): Promise<string> {
  const id = prefixedId('cbd');
  await db
    .insertInto('callback_deliveries')
    .values({
      id,
      payment_id: d.paymentId,
      merchant_id: d.merchantId,
      url: d.url,
      body: d.body,
      status: 'pending',
      attempts: 0,
      max_attempts: d.maxAttempts,
      next_attempt_at: at,
      lease_until: null,
      last_error: null,
      created_at: at,
      updated_at: at,
      delivered_at: null,
    })
    .execute();
  return id;
}

/**
 * When the deliveries of a payment made after its first one (its resends) were created, since
 * `since`, oldest first.
 */
export async function resendTimes(db: Kysely<Tables>, paymentId: string, since: number): Promise<number[]> {
  const rows = await db
    .selectFrom('callback_deliveries')
    .select('created_at')
    .where('payment_id', '=', paymentId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows
    .slice(1)
    .map((r) => Number(r.created_at))
    .filter((at) => at >= since);
}
