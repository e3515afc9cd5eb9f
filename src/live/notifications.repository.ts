/** SQL for channel notifications: stored once per provider event, applied once. */
import { sql, type Kysely } from 'kysely';
import { insertRecords } from '../db/json-records.ts';
import { claimDue, type WorkTable } from '../db/claim.ts';
import type { Database } from '../db/database.ts';
import type { ChannelEventState, ChannelEventTable, Tables } from '../db/schema.ts';

export type ChannelEventRow = Omit<ChannelEventTable, 'id' | 'apply_attempts'> & { id: number };

/** A notification to store; `raw_base64` only when `body` is not exactly its bytes. */
export type NewChannelEvent = Pick<
  ChannelEventTable,
  'provider' | 'event_id' | 'payment_id' | 'reference' | 'type' | 'body'
> & { raw_base64?: string | null };

const EVENT_COLUMNS = {
  provider: 'text',
  event_id: 'text',
  payment_id: 'text',
  reference: 'text',
  type: 'text',
  body: 'text',
  raw_base64: 'text',
  state: 'text',
  next_action_at: 'bigint',
  lease_until: 'bigint',
  received_at: 'bigint',
  applied_at: 'bigint',
} as const satisfies Record<keyof Omit<ChannelEventTable, 'id' | 'apply_attempts'>, 'text' | 'bigint'>;

/** The key a notification is stored under: one row per provider event. */
export function eventKey(e: Pick<NewChannelEvent, 'provider' | 'event_id'>): string {
  return `${e.provider}\u0000${e.event_id}`;
}

/**
 * Stores verified notifications in one statement, each unless the same event is stored already
 * (or earlier in the batch). Returns the keys (`eventKey`) of those stored now. Stored `applied`
 * in the transaction that applies them, or `pending`, due for the worker at `dueAt`.
 */
export async function insertChannelEvents(
  db: Kysely<Tables>,
  events: NewChannelEvent[],
  state: ChannelEventState,
  at: number,
  dueAt: number | null,
): Promise<Set<string>> {
  const applied = state === 'applied';
  // In the order of the unique key, so that two processes storing the same events cannot deadlock on it.
  const ordered = [...events].sort((a, b) =>
    eventKey(a) < eventKey(b) ? -1 : eventKey(a) > eventKey(b) ? 1 : 0,
  );
  const rows = ordered.map((e) => ({
    ...e,
    state,
    next_action_at: applied ? null : dueAt,
    lease_until: null,
    received_at: at,
    applied_at: applied ? at : null,
  }));
  const stored = await sql<{ provider: string; event_id: string }>`
    ${insertRecords(db, 'channel_events', rows, EVENT_COLUMNS)} where true
    on conflict (provider, event_id) do nothing
    returning provider, event_id`.execute(db);
  return new Set(stored.rows.map(eventKey));
}

export async function markApplied(db: Kysely<Tables>, id: number, at: number): Promise<void> {
  await db
    .updateTable('channel_events')
    .set({ state: 'applied', applied_at: at, next_action_at: null, lease_until: null })
    .where('id', '=', id)
    .execute();
}

/**
 * Counts a failed try to apply a pending event and puts it back for a later one at `at`. Answers
 * its failed tries so far, or null when it is not pending (another process applied it).
 */
export async function failedApply(db: Kysely<Tables>, id: number, at: number): Promise<number | null> {
  const row = await db
    .updateTable('channel_events')
    .set((eb) => ({ apply_attempts: eb('apply_attempts', '+', 1), next_action_at: at, lease_until: null }))
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .returning('apply_attempts')
    .executeTakeFirst();
  return row ? Number(row.apply_attempts) : null;
}

/** Gives up on a pending event that could not be applied: it stays stored, never tried again. */
export async function markFailed(db: Kysely<Tables>, id: number): Promise<void> {
  await db
    .updateTable('channel_events')
    .set({ state: 'failed', next_action_at: null, lease_until: null })
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

/**
 * When each provider last sent a notification that passed its signature check (every verified
 * notification is stored), in epoch ms, or null when none ever came.
 */
export async function lastNotifications(
  db: Kysely<Tables>,
  providers: readonly string[],
): Promise<{ provider: string; at: number | null }[]> {
  // One indexed lookup per provider: a max over (provider, received_at) reads one index entry.
  return Promise.all(
    providers.map(async (provider) => {
      const row = await db
        .selectFrom('channel_events')
        .select((eb) => eb.fn.max('received_at').as('at'))
        .where('provider', '=', provider)
        .executeTakeFirst();
      return { provider, at: row?.at === null || row?.at === undefined ? null : Number(row.at) };
    }),
  );
}
