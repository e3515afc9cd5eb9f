/**
 * The PostgreSQL pool under the gateway's kysely instance: bounded connection waits, no JIT,
 * int8 read as numbers, named statements, and every connection's failures reported to `health`.
 */
import pg from 'pg';
import type { ConnectionLog } from './connection-health.ts';
import { nameStatements, StatementNames } from './pg-statements.ts';

/** A pool for `url` whose new connections give up after `connectTimeoutMs`. */
export function pgPool(url: string, health: ConnectionLog, connectTimeoutMs: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    // Without it, pg waits for a connection forever; with it, a request fails (503) in bounded time.
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
    // No JIT compilation: a statement of the gateway runs in a millisecond, and compiling one costs
    // hundreds. PostgreSQL compiles when a plan's estimated cost passes jit_above_cost, and a range
    // whose bounds come from another table is estimated at a fixed share of its table (the sums of
    // refunds by their pay-ins' key ranges: 400 ms a batch at 850,000 transactions). An `options`
    // in DATABASE_URL takes the place of this one.
    options: '-c jit=off',
    // int8 columns hold paise and epoch milliseconds: both well inside Number's exact range.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An 'error' event without a listener ends the process. The pool listens on its idle
  // connections only; a connection checked out (between a transaction's statements, say) needs
  // its own. The query in flight fails with the error (503); the pool drops the connection.
  pool.on('error', (err) => health.lost(err));
  const names = new StatementNames();
  pool.on('connect', (client) => {
    client.on('error', (err) => health.lost(err));
    nameStatements(client, names);
    health.back();
  });
  return pool;
}
