/**
 * Telling the transaction workers of other processes that work is waiting: a notification after a
 * payout is committed, sent by a process whose own worker is not running. As for callbacks
 * (`callbacks/queue-signal.ts`), this only makes the work prompt; every worker also polls.
 */
import type { Database } from '../db/database.ts';

export const WORK_CHANNEL = 'paygate_transactions';

/** Wakes the transaction workers of every process. Call after the commit. */
export function notifyWork(database: Pick<Database, 'notify'>): Promise<void> {
  return database.notify(WORK_CHANNEL);
}

/** Calls `onSignal` when any process notifies, and after every reconnect (notifications were missed). */
export function listenForWork(
  database: Pick<Database, 'listen'>,
  onSignal: () => void,
): { stop(): Promise<void> } | null {
  return database.listen(WORK_CHANNEL, onSignal);
}
