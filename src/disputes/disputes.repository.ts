/** SQL for disputes: a customer's dispute of a pay-in, beside the `dispute` exception that shows it. */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { DisputeStatus, DisputeTable, Tables } from '../db/schema.ts';

export type DisputeRow = Selectable<DisputeTable>;

function toRow(r: DisputeRow): DisputeRow {
  return {
    ...r,
    exception_id: Number(r.exception_id),
    amount: r.amount === null ? null : Number(r.amount),
    refunded: Number(r.refunded),
    owed: Number(r.owed),
    opened_at: Number(r.opened_at),
    decided_at: r.decided_at === null ? null : Number(r.decided_at),
  };
}

/** Records a dispute opened, beside the exception just opened for it. */
export async function insertDispute(
  db: Kysely<Tables>,
  d: Omit<DisputeTable, 'status' | 'refund_id' | 'refunded' | 'owed' | 'decided_at' | 'decided_by'>,
): Promise<void> {
  await db
    .insertInto('disputes')
    .values({ ...d, status: 'open', refund_id: null, decided_at: null, decided_by: null })
    .onConflict((oc) => oc.column('exception_id').doNothing())
    .execute();
}

/** The dispute an exception shows. The caller holds the exception locked, which guards the dispute too. */
export async function disputeOfException(
  db: Kysely<Tables>,
  exceptionId: number,
): Promise<DisputeRow | undefined> {
  const row = await db
    .selectFrom('disputes')
    .selectAll()
    .where('exception_id', '=', exceptionId)
    .executeTakeFirst();
  return row ? toRow(row) : undefined;
}

/** The disputes of a pay-in, oldest first. */
export async function disputesOfPayin(db: Kysely<Tables>, payinId: string): Promise<DisputeRow[]> {
  const rows = await db
    .selectFrom('disputes')
    .selectAll()
    .where('payin_id', '=', payinId)
    .orderBy('opened_at')
    .orderBy('exception_id')
    .execute();
  return rows.map(toRow);
}

/** Records a dispute's outcome; false when it was decided already (nothing changes then). */
export async function decideDispute(
  db: Kysely<Tables>,
  exceptionId: number,
  d: { status: Exclude<DisputeStatus, 'open'>; refundId: string | null; refunded: number; owed: number },
  by: string,
  at: number,
): Promise<boolean> {
  const result = await db
    .updateTable('disputes')
    .set({
      status: d.status,
      refund_id: d.refundId,
      refunded: d.refunded,
      owed: d.owed,
      decided_at: at,
      decided_by: by,
    })
    .where('exception_id', '=', exceptionId)
    .where('status', '=', 'open')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** What lost disputes left owed, per currency (paise, as text: exact past 2^53). */
export async function owedSums(db: Kysely<Tables>): Promise<{ currency: string; total: bigint }[]> {
  const rows = await db
    .selectFrom('disputes')
    .select(['currency', sql<string>`cast(sum(owed) as text)`.as('total')])
    .where('owed', '>', 0)
    .groupBy('currency')
    .execute();
  return rows.map((r) => ({ currency: r.currency, total: BigInt(r.total) }));
}
