/**
 * The turns of a whole cluster to call one provider, kept in PostgreSQL (`channel_limits`, one row
 * per provider): a process takes the next turns in one statement that moves the row's next turn on,
 * so no two processes hold the same turn however many serve the database. Times are the database's
 * clock (ms), never a process's: processes whose clocks differ still space their calls on one line.
 * The row also holds the provider's pause after a 429 and its back-off while it fails every call:
 * then each turn is a probe, one back-off after the one before, and the back-off doubles (at most
 * once per back-off, so the calls already on their way do not double it again) up to its cap.
 * SQLite serves one process: `channelTurns` gives nothing there, and the limiter stays in memory.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './database.ts';
import type { Tables } from './schema.ts';

/** Failed calls in a row after which a provider's calls back off as a whole. */
export const FAILING_AFTER = 3;
/** The first back-off while a provider fails every call. */
export const FIRST_BACKOFF_MS = 1000;

/** Turns granted: `count` turns `spacingMs` apart from `firstAt`, on the database's clock (`dbNow`). */
export interface TurnGrant {
  firstAt: number;
  count: number;
  spacingMs: number;
  dbNow: number;
  /** The provider's back-off now (0: it answers). */
  backoffMs: number;
  /** The provider's pause after a 429, on the database's clock. */
  pausedUntil: number;
  /** Calls failed in a row, by any process. */
  failures: number;
}

/** Where a cluster's turns to call a provider are kept. */
export interface TurnStore {
  /**
   * The next `count` turns `gapMs` apart (one turn, a back-off after the last, while backing off),
   * the first no sooner than `leadMs` after the database's now (the time the answer takes to arrive)
   * and no later than `withinMs` after it: a first turn later than that is not taken (count 0,
   * `firstAt` when it would come), so a turn nobody could use is not lost to the cluster.
   */
  reserve(
    channel: string,
    count: number,
    gapMs: number,
    leadMs: number,
    withinMs: number,
  ): Promise<TurnGrant>;
  /** A call failed (5xx, no answer): counted, and the back-off begun or doubled. Answers the back-off. */
  failed(channel: string, capMs: number): Promise<number>;
  /** A call was answered: the failures and back-off end, and the next turn comes a gap after the last. */
  answered(channel: string, gapMs: number): Promise<void>;
  /** A 429: every turn waits `ms` from now. */
  pause(channel: string, ms: number): Promise<void>;
  /** The provider's back-off now (ms; 0 when it answers). */
  backoffMs(channel: string): Promise<number>;
}

/** The cluster's turns on PostgreSQL; null on SQLite, whose one process keeps its turns in memory. */
export function channelTurns(database: Pick<Database, 'kind' | 'db'>): TurnStore | null {
  return database.kind === 'postgres' ? new PostgresTurns(database.db) : null;
}

/** The database's clock in ms, read when the statement runs. */
const DB_NOW = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::double precision`;

/** The furthest ahead a turn is asked for (a caller with no deadline): a day. */
const MAX_WITHIN_MS = 86_400_000;

interface TurnsRow {
  next: number;
  backoff: number;
  paused: number;
  failures: number;
  now: number;
}

function grant(r: TurnsRow, firstAt: number, count: number, spacingMs: number): TurnGrant {
  return {
    firstAt,
    count,
    spacingMs,
    dbNow: Number(r.now),
    backoffMs: Number(r.backoff),
    pausedUntil: Number(r.paused),
    failures: Number(r.failures),
  };
}

class PostgresTurns implements TurnStore {
  private readonly made = new Set<string>();

  constructor(private readonly db: Kysely<Tables>) {}

  /** The provider's row, made by the first process to call it. */
  private async row(channel: string): Promise<void> {
    if (this.made.has(channel)) return;
    await this.db
      .insertInto('channel_limits')
      .values({ channel, next_turn_at: 0, paused_until: 0, failures: 0, backoff_ms: 0, backoff_at: 0 })
      .onConflict((oc) => oc.column('channel').doNothing())
      .execute();
    this.made.add(channel);
  }

  async reserve(
    channel: string,
    count: number,
    gapMs: number,
    leadMs: number,
    withinMs: number,
  ): Promise<TurnGrant> {
    await this.row(channel);
    const taken = sql<number>`case when l.backoff_ms > 0 then l.backoff_ms else ${count * gapMs}::double precision end`;
    const first = sql<number>`greatest(l.next_turn_at, n.ms + ${leadMs}::double precision, l.paused_until)`;
    const within = Math.min(withinMs, MAX_WITHIN_MS);
    const { rows } = await sql<TurnsRow>`update channel_limits as l
      set next_turn_at = ${first} + ${taken}
      from (select ${DB_NOW} as ms) as n
      where l.channel = ${channel} and ${first} <= n.ms + ${within}::double precision
      returning l.next_turn_at as next, l.backoff_ms as backoff, l.paused_until as paused,
        l.failures as failures, n.ms as now`.execute(this.db);
    if (rows[0]) {
      const r = rows[0];
      const backoff = Number(r.backoff);
      const spacingMs = backoff > 0 ? backoff : gapMs;
      const granted = backoff > 0 ? 1 : count;
      return grant(r, Number(r.next) - granted * spacingMs, granted, spacingMs);
    }
    // The first turn comes too late for every caller waiting: it is left for one who can use it.
    const { rows: later } = await sql<TurnsRow>`select ${first} as next, l.backoff_ms as backoff,
        l.paused_until as paused, l.failures as failures, n.ms as now
      from channel_limits as l, (select ${DB_NOW} as ms) as n
      where l.channel = ${channel}`.execute(this.db);
    const r = later[0]!;
    return grant(r, Number(r.next), 0, gapMs);
  }

  async failed(channel: string, capMs: number): Promise<number> {
    await this.row(channel);
    const first = Math.min(FIRST_BACKOFF_MS, capMs);
    // The back-off this failure leaves: begun at the FAILING_AFTER-th failure in a row, doubled by
    // a failure a whole back-off after it last changed (a probe's), else as it is.
    const next: RawBuilder<number> = sql<number>`case
      when l.failures + 1 < ${FAILING_AFTER} then l.backoff_ms
      when l.backoff_ms = 0 then ${first}::double precision
      when n.ms - l.backoff_at >= l.backoff_ms then least(l.backoff_ms * 2, ${capMs}::double precision)
      else l.backoff_ms end`;
    const { rows } = await sql<{ backoff: number }>`update channel_limits as l
      set failures = l.failures + 1,
          backoff_ms = ${next},
          backoff_at = case when ${next} <> l.backoff_ms then n.ms else l.backoff_at end,
          next_turn_at = case when ${next} <> l.backoff_ms then greatest(l.next_turn_at, n.ms + ${next})
                         else l.next_turn_at end
      from (select ${DB_NOW} as ms) as n
      where l.channel = ${channel}
      returning l.backoff_ms as backoff`.execute(this.db);
    return Number(rows[0]?.backoff ?? 0);
  }

  async answered(channel: string, gapMs: number): Promise<void> {
    await this.row(channel);
    // The turns given while backing off lie a back-off apart: the next comes a gap after the last.
    await sql`update channel_limits as l
      set failures = 0, backoff_ms = 0, backoff_at = n.ms,
          next_turn_at = case when l.backoff_ms > 0
            then greatest(n.ms, l.next_turn_at - l.backoff_ms + ${gapMs}::double precision)
            else l.next_turn_at end
      from (select ${DB_NOW} as ms) as n
      where l.channel = ${channel} and (l.failures > 0 or l.backoff_ms > 0)`.execute(this.db);
  }

  async pause(channel: string, ms: number): Promise<void> {
    await this.row(channel);
    await sql`update channel_limits set paused_until = greatest(paused_until, ${DB_NOW} + ${ms}::double precision)
      where channel = ${channel}`.execute(this.db);
  }

  async backoffMs(channel: string): Promise<number> {
    const row = await this.db
      .selectFrom('channel_limits')
      .select('backoff_ms')
      .where('channel', '=', channel)
      .executeTakeFirst();
    return Number(row?.backoff_ms ?? 0);
  }
}
