/** SQL for channel notifications: stored once per provider event, applied once. */
import type { Kysely } from 'kysely';
import { claimDue, type WorkTable } from '../db/claim.ts';
import type { Database } from '../db/database.ts';
import type { ChannelEventState, ChannelEventTable, Tables } from '../db/schema.ts';

export type ChannelEventRow = Omit<ChannelEventTable, 'id'> & { id: number };

export type NewChannelEvent = Pick<
  ChannelEventTable,
  'provider' | 'event_id' | 'payment_id' | 'reference' | 'type' | 'body'
>;

/**
 * Stores a verified notification, unless the same event is stored already. Returns its id when it
 * was stored now, null for a duplicate. Stored `applied` in the transaction that applies it, or
 * `pending`, due for the worker at `dueAt`.
 */
export async function insertChannelEvent(
  db: Kysely<Tables>,
  e: NewChannelEvent,
  state: ChannelEventState,
  at: number,
  dueAt: number | null,
): Promise<number | null> {
  const applied = state === 'applied';
  const row = await db
    .insertInto('channel_events')
    .values({
      ...e,
      state,
      next_action_at: applied ? null : dueAt,
      lease_until: null,
      received_at: at,
      applied_at: applied ? at : null,
    })
    .onConflict((oc) => oc.columns(['provider', 'event_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row ? Number(row.id) : null;
}

export async function markApplied(db: Kysely<Tables>, id: number, at: number): Promise<void> {
  await db
    .updateTable('channel_events')
    .set({ state: 'applied', applied_at: at, next_action_at: null, lease_until: null })
    .where('id', '=', id)
    .execute();
}

/** Puts an event back for a later try (its application failed). */
export async function retryEventAt(db: Kysely<Tables>, id: number, at: number): Promise<void> {
  await db
    .updateTable('channel_events')
    .set({ next_action_at: at, lease_until: null })
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .execute();
}

const DUE_EVENTS: WorkTable<'channel_events'> = {
  table: 'channel_events',
  key: 'id',
  open: ['pending'],
  dueAt: 'next_action_at',
  stateColumn: 'state',
};

/** Claims stored notifications nobody applied (their request stopped), for `leaseMs`. */
export async function claimDueEvents(
  database: Pick<Database, 'db' | 'lockRows'>,
  now: number,
  leaseMs: number,
  limit: number,
): Promise<ChannelEventRow[]> {
  const rows = await claimDue(database, DUE_EVENTS, now, leaseMs, limit);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}
