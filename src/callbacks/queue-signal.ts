/**
 * Telling other processes that a callback is waiting: a notification after the outbox row is
 * committed, heard by the dispatcher of every process that shares the database. This only makes
 * delivery prompt; nothing depends on it, because every dispatcher also polls.
 */
import type { Database } from '../db/database.ts';

export const QUEUE_CHANNEL = 'paygate_callbacks';

/** Wakes the dispatchers of every process. Call after the commit: a notification inside a transaction waits for it anyway. */
export function notifyQueued(database: Pick<Database, 'notify'>): Promise<void> {
  return database.notify(QUEUE_CHANNEL);
}

/** Calls `onSignal` when any process queues a callback, and after every reconnect. */
export function listenForQueued(
  database: Pick<Database, 'listen'>,
  onSignal: () => void,
): { stop(): Promise<void> } | null {
  return database.listen(QUEUE_CHANNEL, onSignal);
}
