/** Grouped reads of transactions by payment_id. */
import type { Kysely } from 'kysely';
import { BatchQueue } from '../db/batch-queue.ts';
import type { Tables } from '../db/schema.ts';
import { findTransactions, type TransactionRow } from './transactions.repository.ts';

/** The most transactions `transactionReader` reads in one statement. */
const MAX_READ = 100;

/**
 * Reads transactions by payment_id, those asked for together in one statement (`findTransactions`):
 * under load a hot path (a refund's pay-in, on creation and in the worker) then costs a share of one
 * query rather than a query of its own. Not for use inside a transaction (on SQLite the read would
 * wait for it).
 */
export function transactionReader(
  db: Kysely<Tables>,
): (paymentId: string) => Promise<TransactionRow | undefined> {
  const group = new BatchQueue<string, TransactionRow | undefined>(
    async (ids) => {
      const byId = new Map((await findTransactions(db, [...new Set(ids)])).map((r) => [r.payment_id, r]));
      return ids.map((id) => byId.get(id));
    },
    MAX_READ,
    // No id can make the read fail: a failure is the database's, and the group fails as one.
    () => false,
  );
  return (paymentId) => group.submit(paymentId);
}
