/**
 * The callback outbox: one delivery row per event (a final status, a reversal, a refund's final
 * status), written in the transaction that makes the event, and one per resend. Each row carries
 * its event's `webhook-id`: a new one for a new event, the event's own for a resend.
 */
import type { Insertable, Kysely } from 'kysely';
import { insertRecords } from '../db/json-records.ts';
import type { CallbackDeliveryTable, Tables } from '../db/schema.ts';
import { prefixedId } from '../ids.ts';

export interface NewDelivery {
  paymentId: string;
  merchantId: string;
  url: string;
  body: string;
  maxAttempts: number;
  /** The `webhook-id` of the event this delivers again; a new event gets a new one. */
  eventId?: string;
}

function deliveryRow(d: NewDelivery, at: number): Insertable<CallbackDeliveryTable> & { id: string } {
  return {
    id: prefixedId('cbd'),
    payment_id: d.paymentId,
    merchant_id: d.merchantId,
    url: d.url,
    body: d.body,
    event_id: d.eventId ?? prefixedId('msg'),
    status: 'pending',
    attempts: 0,
    max_attempts: d.maxAttempts,
    next_attempt_at: at,
    lease_until: null,
    last_error: null,
    created_at: at,
    updated_at: at,
    delivered_at: null,
  };
}

/**
 * Queues one delivery (a resend). It delivers the event whose body it repeats, so it takes the
 * `webhook-id` of that event's first delivery; a body sent before under no id gets a new one.
 * Returns the delivery's id.
 */
export async function enqueueDelivery(db: Kysely<Tables>, d: NewDelivery, at: number): Promise<string> {
  const eventId = d.eventId ?? (await eventIdOf(db, d.paymentId, d.body));
  const [id] = await enqueueDeliveries(db, [{ ...d, eventId }], at);
  return id!;
}

/** The `webhook-id` of the earliest delivery of this body for this transaction, if any. */
async function eventIdOf(db: Kysely<Tables>, paymentId: string, body: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('callback_deliveries')
    .select('event_id')
    .where('payment_id', '=', paymentId)
    .where('body', '=', body)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row?.event_id || undefined;
}

const DELIVERY_COLUMNS = {
  id: 'text',
  payment_id: 'text',
  merchant_id: 'text',
  url: 'text',
  body: 'text',
  event_id: 'text',
  status: 'text',
  attempts: 'integer',
  max_attempts: 'integer',
  next_attempt_at: 'bigint',
  lease_until: 'bigint',
  last_error: 'text',
  created_at: 'bigint',
  updated_at: 'bigint',
  delivered_at: 'bigint',
} as const satisfies Record<keyof CallbackDeliveryTable, 'text' | 'bigint' | 'integer'>;

/** Queues the deliveries of final statuses settled together, in one statement. Returns their ids, in order. */
export async function enqueueDeliveries(
  db: Kysely<Tables>,
  ds: NewDelivery[],
  at: number,
): Promise<string[]> {
  if (ds.length === 0) return [];
  const rows = ds.map((d) => deliveryRow(d, at));
  await insertRecords(db, 'callback_deliveries', rows, DELIVERY_COLUMNS).execute(db);
  return rows.map((r) => r.id);
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
