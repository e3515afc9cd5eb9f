/**
 * The final statuses' part of `paygate ledger verify`: every final status that moved money has the
 * journal that moved it. A payment seen at the provider (a pay-in SUCCESS), money paid out (a payout
 * or refund SUCCESS), a hold given back (a payout or a merchant's refund FAILED) and a payout's
 * reversal each have their journal, or the ledger is missing a movement Paygate has seen.
 */
import { sql, type Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';

/** The journal each final status must have, by the transactions it applies to. */
const RULES: { journal: string; which: string; where: ReturnType<typeof sql> }[] = [
  { journal: 'payin', which: 'pay-in SUCCESS', where: sql`t.kind = 'payin' and t.status = 'SUCCESS'` },
  {
    journal: 'payout_success',
    which: 'payout SUCCESS',
    where: sql`t.kind = 'payout' and t.status = 'SUCCESS'`,
  },
  {
    journal: 'payout_release',
    which: 'payout FAILED',
    where: sql`t.kind = 'payout' and t.status = 'FAILED'`,
  },
  {
    journal: 'payout_reversal',
    which: 'payout reversed',
    where: sql`t.kind = 'payout' and t.reversed_at is not null`,
  },
  {
    journal: 'refund_success',
    which: 'refund SUCCESS',
    where: sql`t.kind = 'refund' and t.refund_of is not null and t.status = 'SUCCESS'`,
  },
  {
    journal: 'refund_release',
    which: 'refund FAILED',
    where: sql`t.kind = 'refund' and t.refund_of is not null and t.status = 'FAILED'`,
  },
  {
    journal: 'suspense_refund',
    which: 'refund from suspense SUCCESS',
    where: sql`t.kind = 'refund' and t.refund_of is null and t.status = 'SUCCESS'`,
  },
];

/** At most this many transactions are named per rule; the count says how many there are. */
const NAMED = 5;

export async function finalJournalsCheck(db: Kysely<Tables>): Promise<string[]> {
  const problems: string[] = [];
  for (const rule of RULES) {
    // The journals of the kind, one row per transaction, joined in one pass: the ledger has no index
    // by payment_id, and a lookup per transaction would read it once per row.
    const missing = await sql<{ payment_id: string; n: string }>`
      select t.payment_id, cast(count(*) over () as text) as n
      from transactions t
      left join (select distinct payment_id from ledger_entries where kind = ${rule.journal}) j
        on j.payment_id = t.payment_id
      where ${rule.where} and j.payment_id is null
      order by t.payment_id
      limit ${NAMED}`.execute(db);
    if (missing.rows.length === 0) continue;
    const ids = missing.rows.map((r) => r.payment_id).join(', ');
    problems.push(
      `${missing.rows[0]!.n} ${rule.which} without a ${rule.journal} journal (${ids}${Number(missing.rows[0]!.n) > NAMED ? ', …' : ''})`,
    );
  }
  return problems;
}
