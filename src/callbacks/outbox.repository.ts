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
