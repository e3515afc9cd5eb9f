/**
 * SQL of what needs a merchant's attention in the console: transactions whose callback failed every
 * attempt, and the exceptions and reconciliation differences that name a merchant or its
 * transactions. A `merchantId` of null means every merchant (an operator).
 */
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { findException, type ExceptionRow } from '../exceptions/exceptions.repository.ts';
import type { MismatchRow } from '../reconcile/reconcile.repository.ts';

type Db = Kysely<Tables>;

/**
 * The payment_ids (as a subquery) of transactions with an event whose callback failed every attempt
 * and was not delivered since: a failed delivery of that event, and none of it delivered or still
 * pending (a resend that is on its way takes it off the list; one that failed too keeps it there).
 */
export function failedDeliveryIds(db: Db, merchantId: string | null) {
  let q = db
    .selectFrom('callback_deliveries as d')
    .select('d.payment_id')
    .where('d.status', '=', 'failed')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('callback_deliveries as o')
            .select(sql.lit(1).as('one'))
            .whereRef('o.payment_id', '=', 'd.payment_id')
            .whereRef('o.event_id', '=', 'd.event_id')
            .where('o.status', '<>', 'failed'),
        ),
      ),
    );
  if (merchantId !== null) q = q.where('d.merchant_id', '=', merchantId);
  return q;
}

/** How many transactions in view have a callback that failed every attempt (`failedDeliveryIds`). */
export async function countFailedDeliveries(db: Db, merchantId: string | null): Promise<number> {
  const row = await db
    .selectFrom(failedDeliveryIds(db, merchantId).distinct().as('f'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Whether a row's column names a transaction of the merchant (found by its key, the payment_id). */
function ofMerchant(column: Expression<string | null>, merchantId: string): Expression<SqlBool> {
  return sql<SqlBool>`exists (select 1 from transactions as t where t.payment_id = ${column} and t.merchant_id = ${merchantId})`;
}

/** Whether an exception (aliased `e`) names the merchant, or a transaction or refund of it. */
function namesMerchant(merchantId: string): Expression<SqlBool> {
  return sql<SqlBool>`(e.merchant_id = ${merchantId} or ${ofMerchant(sql.ref('e.payment_id'), merchantId)} or ${ofMerchant(sql.ref('e.refund_id'), merchantId)})`;
}

/** The exceptions that name a merchant or its transactions: open ones first, newest first, at most `limit`. */
export async function exceptionsNaming(db: Db, merchantId: string, limit: number): Promise<ExceptionRow[]> {
  const ids = await db
    .selectFrom('channel_exceptions as e')
    .select('e.id')
    .where(namesMerchant(merchantId))
    .orderBy(sql`case when e.resolved_at is null then 0 else 1 end`)
    .orderBy('e.id', 'desc')
    .limit(limit)
    .execute();
  const rows = await Promise.all(ids.map((r) => findException(db, Number(r.id))));
  return rows.filter((r): r is ExceptionRow => r !== undefined);
}

/** Whether exception `id` names the merchant or one of its transactions. */
export async function exceptionNames(db: Db, id: number, merchantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('channel_exceptions as e')
    .select('e.id')
    .where('e.id', '=', id)
    .where(namesMerchant(merchantId))
    .executeTakeFirst();
  return row !== undefined;
}

/** A difference with the day and channel of the run that found it. */
export type DifferenceRow = MismatchRow & { date: string };

/**
 * The reconciliation differences about the merchant's transactions (or whose exception names the
 * merchant), newest first, before difference `beforeId` when given; of one run when `runId` is given.
 */
export async function differencesNaming(
  db: Db,
  merchantId: string,
  opts: { limit: number; beforeId?: number; runId?: number },
): Promise<DifferenceRow[]> {
  let q = db
    .selectFrom('reconcile_mismatches as m')
    .innerJoin('reconcile_runs as r', 'r.id', 'm.run_id')
    .innerJoin('channel_exceptions as e', 'e.id', 'm.exception_id')
    .selectAll('m')
    .select('r.date')
    .where((eb) =>
      eb.or([eb('e.merchant_id', '=', merchantId), ofMerchant(sql.ref('m.payment_id'), merchantId)]),
    );
  if (opts.beforeId !== undefined) q = q.where('m.id', '<', opts.beforeId);
  if (opts.runId !== undefined) q = q.where('m.run_id', '=', opts.runId);
  const rows = await q.orderBy('m.id', 'desc').limit(opts.limit).execute();
  return rows.map((r) => ({
    ...r,
    id: Number(r.id),
    run_id: Number(r.run_id),
    exception_id: Number(r.exception_id),
    created_at: Number(r.created_at),
  }));
}
