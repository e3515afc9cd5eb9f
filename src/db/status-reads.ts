/**
 * Status queries, the hottest read of the API, as each database serves them best. Both group the
 * reads that arrive together; neither changes what a single read returns.
 *
 * - SQLite: one prepared statement, run on the connection outside kysely's queue, in groups that
 *   share one read transaction (`sqlite-reads.ts`).
 * - PostgreSQL: the reads that arrive while one query is out go together in the next, one
 *   statement by primary key for all of them, so a burst costs one round trip instead of one each.
 *
 * Either way the merchant and the kind are part of the match: another merchant's transaction, or
 * a payout asked for as a pay-in, is not found.
 */
import type { Kysely } from 'kysely';
import type { Tables, TransactionKind, TransactionStatus } from './schema.ts';
import type { SqliteReads } from './sqlite-reads.ts';
import { BatchQueue } from './batch-queue.ts';

export interface StatusKey {
  paymentId: string;
  merchantId: string;
  kind: TransactionKind;
}

export interface StatusView {
  status: TransactionStatus;
  amount: number;
  currency: string;
  channel_txn_id: string;
  utr: string;
  /** When a SUCCESS payout's money came back, or null. */
  reversed_at: number | null;
}

export type StatusReader = (key: StatusKey) => Promise<StatusView | undefined>;

export function sqliteStatusReader(db: Kysely<Tables>, reads: SqliteReads): StatusReader {
  // Built once: kysely would build and compile the same text on every call.
  const text = db
    .selectFrom('transactions')
    .select(['status', 'amount', 'currency', 'channel_txn_id', 'utr', 'reversed_at'])
    .where('payment_id', '=', '')
    .where('merchant_id', '=', '')
    .where('kind', '=', 'payin')
    .compile().sql;
  return (k) => reads.firstRow<StatusView>(text, [k.paymentId, k.merchantId, k.kind]);
}

/** The most status reads in one PostgreSQL query. */
const MAX_GROUP = 100;

export function postgresStatusReader(db: Kysely<Tables>): StatusReader {
  const group = new BatchQueue<StatusKey, StatusView | undefined>(
    async (keys) => {
      const rows = await db
        .selectFrom('transactions')
        .select([
          'payment_id',
          'merchant_id',
          'kind',
          'status',
          'amount',
          'currency',
          'channel_txn_id',
          'utr',
          'reversed_at',
        ])
        .where('payment_id', 'in', [...new Set(keys.map((k) => k.paymentId))])
        .execute();
      const byId = new Map(rows.map((r) => [r.payment_id, r]));
      return keys.map((k) => {
        const r = byId.get(k.paymentId);
        if (!r || r.merchant_id !== k.merchantId || r.kind !== k.kind) return undefined;
        return {
          status: r.status,
          amount: r.amount,
          currency: r.currency,
          channel_txn_id: r.channel_txn_id,
          utr: r.utr,
          reversed_at: r.reversed_at,
        };
      });
    },
    MAX_GROUP,
    // No key can make the read fail: a failure is the database's, and the group fails as one.
    () => false,
  );
  return (key) => group.submit(key);
}
