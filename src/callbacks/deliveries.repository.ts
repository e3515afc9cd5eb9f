/**
 * SQL for delivering the callback outbox: claiming due deliveries with a lease, recording each
 * attempt, and what operators and metrics read. Attempts and the next run time live in the row
 * (as graphile-worker keeps them in its jobs table), so any process can pick a delivery up.
 */
import { sql, type Kysely } from 'kysely';
import { claimDue, giveBack, type Claim, type WorkTable } from '../db/claim.ts';
import { insertRecords, jsonRecords, type RecordColumns } from '../db/json-records.ts';
import type { Database } from '../db/database.ts';
import type { CallbackAttemptTable, CallbackDeliveryTable, DeliveryStatus, Tables } from '../db/schema.ts';
import type { SigningSecrets } from './standard-webhooks.ts';

export type DeliveryRow = CallbackDeliveryTable;
export type AttemptRow = Omit<CallbackAttemptTable, 'id'> & { id: number };

/** What `last_error` says of an attempt whose process stopped before recording it. */
export const INTERRUPTED = 'interrupted';

/**
 * Deliveries are due when pending and their next attempt's time has come. An attempt counts when
 * it is claimed (graphile-worker's getJobs counts a job's attempts the same way), so a send that
 * kills its process still counts. A row still under a lease when it is claimed was claimed before
 * and its attempt never recorded: that claim is not counted again, and the row comes back marked
 * `interrupted` for the dispatcher to record that attempt instead of sending.
 */
const DUE_DELIVERIES: WorkTable<'callback_deliveries'> = {
  table: 'callback_deliveries',
  key: 'id',
  open: ['pending'],
  dueAt: 'next_attempt_at',
  alsoSet: {
    attempts: sql`case when lease_until is null then attempts + 1 else attempts end`,
    // While an attempt is out its outcome is unknown; the record that ends the lease sets it.
    last_error: sql`case when lease_until is null then null else ${INTERRUPTED} end`,
  },
};

/**
 * Claims up to `limit` due deliveries until `now + leaseMs`. Each comes back with `attempts` the
 * number of the attempt to make, or, when `last_error` is `interrupted`, of the attempt that was
 * cut off.
 */
export function claimDueDeliveries(
  database: Pick<Database, 'db' | 'lockRows'>,
  now: number,
  leaseMs: number,
  limit: number,
  owner?: string,
): Promise<DeliveryRow[]> {
  return claimDue(database, DUE_DELIVERIES, now, leaseMs, limit, owner);
}

/**
 * Gives back the deliveries of a claim whose answer was lost: none of them was sent, so the
 * attempt it counted is uncounted, and one it took to record as interrupted is left to the next
 * claim to record so, as before.
 */
export function giveBackDeliveries(database: Pick<Database, 'db'>, claim: Claim): Promise<void> {
  return giveBack(database, DUE_DELIVERIES, claim, {
    attempts: sql`case when last_error = ${INTERRUPTED} then attempts else attempts - 1 end`,
    lease_until: sql`case when last_error = ${INTERRUPTED} then 0 else null end`,
  });
}

/**
 * When the next pending delivery can be claimed (its due time, or the end of its lease if later),
 * or null when nothing is pending. Lets a dispatcher sleep exactly until the next retry.
 */
export async function nextClaimableAt(db: Kysely<Tables>): Promise<number | null> {
  const row = await db
    .selectFrom('callback_deliveries')
    .select(
      sql<
        number | string | null
      >`min(case when lease_until is not null and lease_until >= next_attempt_at then lease_until + 1 else next_attempt_at end)`.as(
        'at',
      ),
    )
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return row?.at == null ? null : Number(row.at);
}

/** The webhook secrets that sign for the given merchants, by merchant id. */
export async function webhookSecrets(
  db: Kysely<Tables>,
  merchantIds: string[],
): Promise<Map<string, SigningSecrets>> {
  if (merchantIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('merchants')
    .select(['id', 'webhook_secret', 'previous_webhook_secret', 'previous_secret_until'])
    .where('id', 'in', merchantIds)
    .execute();
  return new Map(
    rows.map((r) => [
      r.id,
      {
        current: r.webhook_secret,
        previous: r.previous_webhook_secret,
        previousUntil: r.previous_secret_until === null ? null : Number(r.previous_secret_until),
      },
    ]),
  );
}

const ATTEMPT_COLUMNS: RecordColumns = {
  delivery_id: 'text',
  attempt_no: 'integer',
  started_at: 'bigint',
  latency_ms: 'integer',
  http_status: 'integer',
  error_kind: 'text',
  response_snippet: 'text',
};

const MOVE_COLUMNS: RecordColumns = {
  delivery_id: 'text',
  claimed_status: 'text',
  claimed_attempts: 'integer',
  claimed_lease: 'bigint',
  status: 'text',
  next_attempt_at: 'bigint',
  last_error: 'text',
  at: 'bigint',
  delivered_at: 'bigint',
};

export interface AttemptRecord {
  deliveryId: string;
  /**
   * The attempts count the claim returned, which is this attempt's number; the row is only updated
   * if its count and lease are still the claim's.
   */
  claimedAttempts: number;
  claimedLease: number;
  startedAt: number;
  latencyMs: number;
  httpStatus: number | null;
  errorKind: string | null;
  snippet: string | null;
  /** What the delivery becomes. */
  status: DeliveryStatus;
  nextAttemptAt: number | null;
  at: number;
}

/**
 * Records attempts and moves each delivery on (delivered, failed, or pending until the next retry),
 * releasing its lease, in one transaction. Each update is conditional on the lease and the attempt
 * count the claim saw: if the lease ran out and another process took the row over, that process's
 * record wins and this attempt is only logged. Returns, per record, whether its delivery was updated.
 */
export async function recordAttempts(db: Kysely<Tables>, records: AttemptRecord[]): Promise<boolean[]> {
  if (records.length === 0) return [];
  return db.transaction().execute(async (tx) => {
    const attempts = records.map((r) => ({
      delivery_id: r.deliveryId,
      attempt_no: r.claimedAttempts,
      started_at: r.startedAt,
      latency_ms: r.latencyMs,
      http_status: r.httpStatus,
      error_kind: r.errorKind,
      response_snippet: r.snippet,
    }));
    await insertRecords(tx, 'callback_attempts', attempts, ATTEMPT_COLUMNS).execute(tx);
    // One statement for the deliveries of the batch (UPDATE … FROM the batch's rows). A
    // delivery recorded twice in one batch (its lease ran out and this process claimed it again)
    // goes into a statement of its own, so that each record learns whether it was the one applied.
    // Round k holds the k-th record of each delivery.
    const rounds: { record: AttemptRecord; index: number }[][] = [];
    const seen = new Map<string, number>();
    records.forEach((record, index) => {
      const k = seen.get(record.deliveryId) ?? 0;
      seen.set(record.deliveryId, k + 1);
      (rounds[k] ??= []).push({ record, index });
    });
    const updated = new Array<boolean>(records.length).fill(false);
    for (const round of rounds) {
      const done = await updateDeliveries(
        tx,
        round.map((r) => r.record),
      );
      for (const { record, index } of round) updated[index] = done.has(record.deliveryId);
    }
    return updated;
  });
}

/**
 * Moves a delivery on as its record says, without writing the attempt log, if the row is still as
 * claimed: for a record the database refused (the row is released rather than left to its lease).
 */
export async function releaseDelivery(db: Kysely<Tables>, record: AttemptRecord): Promise<boolean> {
  return (await updateDeliveries(db, [record])).has(record.deliveryId);
}

/**
 * Moves each delivery on as its record says, if it is still as claimed. Returns the ids updated.
 * Every condition on `d` comes from the batch's rows (`claimed_status` included, rather than the
 * constant 'pending'), so SQLite's planner walks the batch and finds each delivery by its key
 * instead of walking every pending delivery through the status index for each row of the batch.
 */
async function updateDeliveries(db: Kysely<Tables>, records: AttemptRecord[]): Promise<Set<string>> {
  const moves = records.map((r) => ({
    delivery_id: r.deliveryId,
    claimed_status: 'pending',
    claimed_attempts: r.claimedAttempts,
    claimed_lease: r.claimedLease,
    status: r.status,
    next_attempt_at: r.nextAttemptAt,
    last_error: lastError(r),
    at: r.at,
    delivered_at: r.status === 'delivered' ? r.at : null,
  }));
  const result = await sql<{ id: string }>`
    update callback_deliveries as d
    set status = v.status, next_attempt_at = v.next_attempt_at, lease_until = null,
        last_error = v.last_error, updated_at = v.at, delivered_at = v.delivered_at
    from ${jsonRecords(db, moves, MOVE_COLUMNS)} as v
    where d.id = v.delivery_id and d.status = v.claimed_status and d.attempts = v.claimed_attempts
      and d.lease_until = v.claimed_lease
    returning id`.execute(db);
  return new Set(result.rows.map((row) => row.id));
}

/** What the delivery row shows of an attempt that failed. */
function lastError(r: AttemptRecord): string | null {
  if (r.errorKind === null) return null;
  return r.httpStatus === null ? r.errorKind : `${r.errorKind} ${r.httpStatus}`;
}

/** Deliveries, newest first, optionally of one status and/or one merchant. */
export async function listDeliveries(
  db: Kysely<Tables>,
  filter: { status?: DeliveryStatus; merchantId?: string; paymentId?: string; limit: number },
): Promise<DeliveryRow[]> {
  let q = db.selectFrom('callback_deliveries').selectAll();
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.merchantId) q = q.where('merchant_id', '=', filter.merchantId);
  if (filter.paymentId) q = q.where('payment_id', '=', filter.paymentId);
  return q.orderBy('created_at', 'desc').orderBy('id').limit(filter.limit).execute();
}

/** The attempt log of one delivery, in order. */
export async function listAttempts(db: Kysely<Tables>, deliveryId: string): Promise<AttemptRow[]> {
  const rows = await db
    .selectFrom('callback_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempt_no')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

/** How many deliveries are pending, and the due time of the oldest one that is due at `now`. */
export async function queueStats(
  db: Kysely<Tables>,
  now: number,
): Promise<{ pending: number; oldestDueAt: number | null }> {
  const row = await db
    .selectFrom('callback_deliveries')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('pending'),
      sql<number | string | null>`min(case when next_attempt_at <= ${now} then next_attempt_at end)`.as(
        'oldest',
      ),
    ])
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return { pending: Number(row.pending), oldestDueAt: row.oldest == null ? null : Number(row.oldest) };
}
