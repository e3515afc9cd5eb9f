/**
 * Telling other processes that a callback is waiting, on PostgreSQL: NOTIFY after the outbox row
 * is committed, LISTEN on a connection of its own in each dispatcher. This only makes delivery
 * prompt; nothing depends on it, because every dispatcher also polls. SQLite has one serving
 * process per file and needs none of this.
 */
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';

export const QUEUE_CHANNEL = 'paygate_callbacks';

/** NOTIFY the dispatchers of every process. Call after the commit: a NOTIFY inside a transaction waits for it anyway. */
export async function notifyQueued(database: Pick<Database, 'kind'> & { db: Kysely<Tables> }): Promise<void> {
  if (database.kind !== 'postgres') return;
  await sql`select pg_notify(${QUEUE_CHANNEL}, '')`.execute(database.db);
}

export interface SignalLogger {
  warn(obj: object, msg: string): void;
}

const RECONNECT_MS = 1000;

/**
 * A LISTEN connection that calls `onSignal` for each notification, and once after every
 * (re)connect (notifications sent while it was away are lost, so the caller looks for due work).
 */
export class QueueListener {
  private client: pg.Client | null = null;
  private stopped = true;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly onSignal: () => void,
    private readonly logger: SignalLogger,
  ) {}

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5000 });
    this.client = client;
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      client.removeAllListeners('notification');
      client.end().catch(() => {});
      if (this.client === client) this.client = null;
      if (this.stopped) return;
      if (err)
        this.logger.warn({ err }, 'callback queue listener lost its connection; polling until it is back');
      this.retry = setTimeout(() => void this.connect(), RECONNECT_MS);
      this.retry.unref();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', () => this.onSignal());
    try {
      await client.connect();
      await client.query(`LISTEN ${QUEUE_CHANNEL}`);
      if (this.stopped) {
        await client.end().catch(() => {});
        return;
      }
      this.onSignal();
    } catch (err) {
      onLost(err as Error);
    }
  }
}
