/**
 * Planner statistics kept current by the gateway itself, at start-up and whenever a table has
 * grown or changed much since they were gathered. The hot paths' indexes are chosen without them
 * (docs/performance.md, Query plans); statistics keep the other plans (the console's lists) right
 * after a burst, which autovacuum on PostgreSQL reaches only a minute or more later and which SQLite
 * never gathers by itself.
 *
 * - PostgreSQL: `ANALYZE` of each table that has rows and no statistics, or whose rows changed since
 *   its last analysis by more than a tenth of its size (and at least `MIN_CHANGES`).
 * - SQLite: `PRAGMA optimize`, which analyses (a sample, `analysis_limit`) the tables whose size
 *   changed much since their last analysis, and does nothing otherwise.
 */
import { sql } from 'kysely';
import type { Database } from './database.ts';

/** Changed rows that call for new statistics on PostgreSQL, besides a tenth of the table. */
const MIN_CHANGES = 1000;

/** How often the tables are looked at, by default. */
export const STATISTICS_CHECK_MS = 10_000;

export interface StatisticsLogger {
  warn(obj: object, msg: string): void;
}

export interface StatisticsKeeper {
  /** Gathers the statistics that are missing or stale now; resolves to the tables analysed (PostgreSQL). */
  refresh(): Promise<string[]>;
  /** Refreshes every `intervalMs` until `stop`. A failed refresh is logged and tried again next time. */
  start(intervalMs?: number): void;
  stop(): Promise<void>;
}

export function keepStatistics(
  database: Pick<Database, 'db' | 'kind'>,
  logger: StatisticsLogger | null = null,
): StatisticsKeeper {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;

  async function refresh(): Promise<string[]> {
    if (database.kind === 'sqlite') {
      // 0x10000: every table, not only those this connection has queried; 0x02: analyse them.
      await sql`pragma optimize = 0x10002`.execute(database.db);
      return [];
    }
    const stale = await sql<{ table: string }>`
      select c.relname as table
      from pg_class c
      join pg_stat_user_tables s on s.relid = c.oid
      where c.relnamespace = current_schema()::regnamespace
        -- Never analysed and not empty (the size, unlike the row counters, is known at once).
        and ((c.reltuples < 0 and pg_relation_size(c.oid) > 0)
          or s.n_mod_since_analyze > ${MIN_CHANGES} + 0.1 * greatest(c.reltuples, 0))`.execute(database.db);
    const tables = stale.rows.map((r) => r.table).sort();
    // The names come from the catalog; quoted all the same.
    for (const table of tables) await sql`analyze ${sql.id(table)}`.execute(database.db);
    return tables;
  }

  return {
    refresh,
    start(intervalMs = STATISTICS_CHECK_MS) {
      if (timer) return;
      timer = setInterval(() => {
        running ??= refresh()
          .catch((err: unknown) =>
            logger?.warn({ err: (err as Error)?.message }, 'gathering planner statistics failed'),
          )
          .finally(() => (running = null));
      }, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
