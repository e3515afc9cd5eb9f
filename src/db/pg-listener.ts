/**
 * LISTEN on a PostgreSQL connection of its own, kept alive across lost connections: a dropped
 * connection is logged once, then re-established with backoff and subscribed again; at once when
 * another connection finds the database back, so the back-off never outlives the outage. Each
 * (re)connect also calls `onSignal` once, because notifications sent while it was away are lost
 * and the caller must look for work it may have missed.
 */
import pg from 'pg';
import type { ConnectionLog } from './connection-health.ts';

const FIRST_RETRY_MS = 250;
/** Also how late an idle process (nothing else connecting) notices the database is back. */
const MAX_RETRY_MS = 500;

export class PgListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;
  private delay = FIRST_RETRY_MS;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly onSignal: () => void,
    private readonly log: ConnectionLog,
    private readonly connectTimeoutMs: number,
  ) {
    this.unsubscribe = log.onBack(() => this.retryNow());
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private retryNow(): void {
    if (!this.retry || this.stopped) return;
    clearTimeout(this.retry);
    this.retry = null;
    void this.connect();
  }

  private async connect(): Promise<void> {
    this.retry = null;
    if (this.stopped) return;
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: this.connectTimeoutMs,
    });
    this.client = client;
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      client.removeAllListeners('notification');
      client.end().catch(() => {});
      if (this.client === client) this.client = null;
      if (this.stopped) return;
      this.log.lost(err ?? new Error('LISTEN connection ended'));
      this.retry = setTimeout(() => void this.connect(), this.delay);
      this.retry.unref();
      this.delay = Math.min(this.delay * 2, MAX_RETRY_MS);
    };
    // Registered before connecting and never removed: an 'error' event without a listener ends the process.
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', () => this.onSignal());
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      if (this.stopped) {
        await client.end().catch(() => {});
        return;
      }
      this.delay = FIRST_RETRY_MS;
      this.log.back();
      this.onSignal();
    } catch (err) {
      onLost(err as Error);
    }
  }
}
