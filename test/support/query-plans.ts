/**
 * Which index each statement of a hot path uses, on SQLite (`EXPLAIN QUERY PLAN`) and PostgreSQL
 * (`EXPLAIN (FORMAT JSON)`). The statements are the repositories' own: a repository function runs
 * against a kysely instance whose driver records each compiled statement and answers nothing
 * (`captureStatements`), and the statements are then explained on a real database.
 */
import {
  CompiledQuery,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { Database, DatabaseKind } from '../../src/db/database.ts';
import type { Tables } from '../../src/db/schema.ts';
import { SqliteReads } from '../../src/db/sqlite-reads.ts';
import { postgresStatusReader, sqliteStatusReader, type StatusReader } from '../../src/db/status-reads.ts';
import { sha256Hex } from '../../src/ids.ts';
import { enqueueDeliveries } from '../../src/callbacks/outbox.repository.ts';
import { insertChannelEvents } from '../../src/live/notifications.repository.ts';
import { insertTransactions } from '../../src/transactions/transactions.repository.ts';
import { newPayin, type HotPath, type Values } from './hot-paths.ts';

/** A statement as the application sends it: its text and parameters. */
export interface Statement {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * Runs `issue` against a kysely of `kind`'s dialect that sends nothing anywhere, and returns the
 * statements it issued. Each statement is answered with no rows.
 */
export async function captureStatements(
  kind: DatabaseKind,
  issue: (db: Kysely<Tables>, record: (statement: Statement) => void) => Promise<unknown>,
): Promise<Statement[]> {
  const statements: Statement[] = [];
  const db = new Kysely<Tables>({
    dialect: {
      createAdapter: () => (kind === 'postgres' ? new PostgresAdapter() : new SqliteAdapter()),
      createDriver: () => new DummyDriver(),
      createIntrospector: (d) =>
        kind === 'postgres' ? new PostgresIntrospector(d) : new SqliteIntrospector(d),
      createQueryCompiler: () =>
        kind === 'postgres' ? new PostgresQueryCompiler() : new SqliteQueryCompiler(),
    },
    log: (event) => {
      if (event.level === 'query') statements.push(event.query);
    },
  });
  await issue(db, (statement) => statements.push(statement));
  return statements;
}

/** One table read (or written through a key) by a plan, and the index it goes through (null: a full scan). */
export interface Access {
  table: string;
  index: string | null;
  /** How the plan put it, for the failure message. */
  detail: string;
}

/** The tables' indexes by name, each with its key columns in order (SQLite's rowid as `rowid:TABLE`). */
export type IndexColumns = Map<string, string[]>;

type Run = <T>(sql: string, parameters?: readonly unknown[]) => Promise<T[]>;

export async function indexColumns(kind: DatabaseKind, run: Run): Promise<IndexColumns> {
  const result: IndexColumns = new Map();
  if (kind === 'postgres') {
    const rows = await run<{ name: string; columns: string[] }>(
      `select i.relname as name, array_agg(a.attname::text order by k.ord) as columns
       from pg_index x
       join pg_class i on i.oid = x.indexrelid
       join pg_class t on t.oid = x.indrelid
       join pg_namespace n on n.oid = t.relnamespace and n.nspname = current_schema()
       cross join lateral unnest(x.indkey[0:x.indnkeyatts - 1]) with ordinality as k(attnum, ord)
       join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum
       group by i.relname`,
    );
    for (const r of rows) result.set(r.name, r.columns);
    return result;
  }
  const indexes = await run<{ name: string }>(
    `select il.name as name from sqlite_schema s, pragma_index_list(s.name) il where s.type = 'table'`,
  );
  for (const { name } of indexes) {
    const columns = await run<{ name: string }>('select name from pragma_index_info(?) order by seqno', [
      name,
    ]);
    result.set(
      name,
      columns.map((c) => c.name),
    );
  }
  // A table's INTEGER PRIMARY KEY is its rowid, which no index lists.
  const rowids = await run<{ tbl: string; name: string }>(
    `select s.name as tbl, c.name as name from sqlite_schema s, pragma_table_info(s.name) c
     where s.type = 'table' and c.pk = 1 and upper(c.type) = 'INTEGER'`,
  );
  for (const r of rowids) result.set(`rowid:${r.tbl}`, [r.name]);
  return result;
}

/**
 * The accesses of the plan PostgreSQL runs a named statement on once it has been executed often.
 * The gateway sends its frequent statements under names (`pg-statements.ts`): PostgreSQL plans the
 * first five executions of a named statement for their parameters, and then keeps a generic plan
 * whenever that one is estimated to cost no more than theirs. The statement is prepared, explained
 * five times with its parameters (EXPLAIN EXECUTE plans as an execution would, and runs nothing),
 * and the plan of the sixth is the one read.
 */
export async function cachedPlanAccessesOf(
  database: Pick<Database, 'db'>,
  statement: Statement,
): Promise<Access[]> {
  return database.db.connection().execute(async (db) => {
    const run = runner({ db });
    const args = statement.parameters.map(literal).join(', ');
    const explain = `explain (format json) execute hot_path_statement${args ? `(${args})` : ''}`;
    await run(`prepare hot_path_statement as ${statement.sql}`);
    try {
      for (let i = 0; i < 5; i++) await run(explain);
      const [row] = await run<{ 'QUERY PLAN': [{ Plan: PgNode }] }>(explain);
      const accesses: Access[] = [];
      walkPg(row!['QUERY PLAN'][0].Plan, accesses);
      return accesses.map((a) => ({ ...a, detail: `${a.detail} (named statement, sixth execution)` }));
    } finally {
      await run('deallocate hot_path_statement');
    }
  });
}

/** A parameter written into SQL text, for EXECUTE's arguments. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return `'${String(value).replace(/'/g, "''")}'`;
}

/** The accesses of a statement's plan. `aliases` maps a name used in the statement (`d`) to its table. */
export async function accessesOf(
  kind: DatabaseKind,
  run: Run,
  statement: Statement,
  aliases: Record<string, string> = {},
): Promise<Access[]> {
  if (kind === 'postgres') {
    const [row] = await run<{ 'QUERY PLAN': [{ Plan: PgNode }] }>(
      `explain (format json) ${statement.sql}`,
      statement.parameters,
    );
    const accesses: Access[] = [];
    walkPg(row!['QUERY PLAN'][0].Plan, accesses);
    return accesses;
  }
  const rows = await run<{ detail: string }>(`explain query plan ${statement.sql}`, statement.parameters);
  const accesses: Access[] = [];
  for (const { detail } of rows) {
    const m = /^(SCAN|SEARCH) (\S+)(?: USING (?:COVERING )?INDEX (\S+)| USING (INTEGER )?PRIMARY KEY)?/.exec(
      detail,
    );
    if (!m) continue;
    const table = aliases[m[2]!] ?? m[2]!;
    const index = m[3] ?? (m[4] ? `rowid:${table}` : null);
    accesses.push({ table, index, detail });
  }
  return accesses;
}

interface PgNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Operation?: string;
  'Conflict Arbiter Indexes'?: string[];
  Plans?: PgNode[];
}

function walkPg(node: PgNode, out: Access[]): void {
  const type = node['Node Type'];
  const table = node['Relation Name'];
  if (type === 'ModifyTable') {
    // An INSERT's conflict check goes through its arbiter index; UPDATE and DELETE find their rows below.
    for (const index of node['Conflict Arbiter Indexes'] ?? [])
      out.push({ table: table!, index, detail: `${node.Operation} conflict arbiter ${index}` });
  } else if (table !== undefined) {
    const index =
      node['Index Name'] ??
      (type === 'Bitmap Heap Scan'
        ? (node.Plans ?? []).map((p) => p['Index Name']).find((n) => n !== undefined)
        : undefined) ??
      null;
    out.push({ table, index, detail: `${type} on ${table}${index ? ` using ${index}` : ''}` });
  }
  for (const child of node.Plans ?? []) walkPg(child, out);
}

/** A statement for `run` (kysely's `CompiledQuery`). */
export function raw(sql: string, parameters: readonly unknown[] = []): CompiledQuery {
  return CompiledQuery.raw(sql, [...parameters]);
}

/**
 * What is wrong with a statement's accesses: a table read without an index or through another
 * index than those `uses` names for it, or an index named there and not used. A table in `small`
 * may be read whole: the planner rightly reads a table of a few pages whole rather than through an
 * index, and that cannot be slow.
 */
export function problemsOf(
  accesses: Access[],
  uses: HotPath['uses'],
  indexes: IndexColumns,
  kind: DatabaseKind,
  small: ReadonlySet<string> = new Set(),
): string[] {
  const problems: string[] = [];
  const key = (columns: readonly string[]) => columns.join(', ');
  const seen = new Set<string>();
  for (const a of accesses) {
    const wanted = uses.filter((u) => u.table === a.table).map((u) => key(u.columns));
    if (wanted.length === 0) continue;
    const columns = a.index === null ? null : indexes.get(a.index);
    if (columns && wanted.includes(key(columns))) seen.add(`${a.table}(${key(columns)})`);
    else if (a.index === null && small.has(a.table)) for (const w of wanted) seen.add(`${a.table}(${w})`);
    else
      problems.push(
        `${a.table} read ${a.index ? `through ${a.index} (${key(columns ?? ['?'])})` : 'without an index'}, not (${wanted.join(') or (')}): ${a.detail}`,
      );
  }
  for (const u of uses)
    if ((u.only ?? kind) === kind && !seen.has(`${u.table}(${key(u.columns)})`))
      problems.push(`${u.table} not read through (${key(u.columns)})`);
  return problems;
}

/** SQLite's status reads, recorded instead of run. */
class RecordingReads extends SqliteReads {
  constructor(private readonly record: (statement: Statement) => void) {
    super(undefined as never, undefined as never);
  }

  override firstRow<T>(sql: string, parameters: readonly unknown[]): Promise<T | undefined> {
    this.record({ sql, parameters });
    return Promise.resolve(undefined);
  }
}

function statusReader(kind: DatabaseKind, db: Kysely<Tables>, record: (s: Statement) => void): StatusReader {
  return kind === 'postgres' ? postgresStatusReader(db) : sqliteStatusReader(db, new RecordingReads(record));
}

function runner(database: Pick<Database, 'db'>): Run {
  return async <T>(sql: string, parameters: readonly unknown[] = []) =>
    (await database.db.executeQuery<T>(raw(sql, parameters))).rows as T[];
}

/** The most rows of a table that may be read whole (`problemsOf`). */
const SMALL_TABLE = 500;

async function rowCount(run: Run, table: string): Promise<number> {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`not a table name: ${table}`);
  const [row] = await run<{ n: number | string }>(`select count(*) as n from ${table}`);
  return Number(row!.n);
}

/** Explains each hot path's statements, issued with `values`; returns what is wrong, one line each. */
export async function explainHotPaths(
  database: Pick<Database, 'db' | 'kind' | 'lockRows'>,
  paths: HotPath[],
  values: Values,
): Promise<string[]> {
  const kind = database.kind;
  const run = runner(database);
  const indexes = await indexColumns(kind, run);
  const problems: string[] = [];
  for (const path of paths) {
    if (path.only !== undefined && path.only !== kind) continue;
    const statements = await captureStatements(kind, (db, record) =>
      path.issue({ db, lockRows: database.lockRows, readStatus: statusReader(kind, db, record) }, values),
    );
    const accesses: Access[] = [];
    for (const statement of statements) {
      accesses.push(...(await accessesOf(kind, run, statement, path.aliases)));
      if (kind === 'postgres') accesses.push(...(await cachedPlanAccessesOf(database, statement)));
    }
    const small = new Set<string>();
    for (const a of accesses)
      if (a.index === null && (await rowCount(run, a.table)) <= SMALL_TABLE) small.add(a.table);
    const found =
      statements.length === 0
        ? ['issued no statement']
        : problemsOf(accesses, path.uses, indexes, kind, small);
    problems.push(...found.map((p) => `${path.name} (${values.merchantId}): ${p}`));
  }
  return problems;
}

/** A merchant's payment_id tag: payment_ids are [A-Za-z0-9] only. */
function tagOf(merchantId: string): string {
  return merchantId.replace(/[^A-Za-z0-9]/g, '');
}

export function paymentIdOf(merchantId: string, i: number): string {
  const tag = tagOf(merchantId);
  return `${tag}x${String(i).padStart(31 - tag.length, '0')}`;
}

/** The values hot paths are issued with for a merchant of `fillHotTables`: its first row and its key. */
export function valuesOf(merchantId: string): Values {
  return {
    merchantId,
    orderNo: `${merchantId}-1`,
    paymentId: paymentIdOf(merchantId, 1),
    keyHash: sha256Hex(`key_${merchantId}`),
    now: 1_800_000_000_000,
  };
}

/**
 * A merchant (its key and wallet), and its pay-ins numbered `from` on, `rows` of them, written as creation writes them,
 * 1,000 to a statement: one in ten open and due later, the rest final. Also one callback delivery
 * and one stored notification per ten pay-ins, most of them done. Gathers no statistics.
 */
export async function fillHotTables(
  database: Pick<Database, 'db'>,
  merchantId: string,
  rows: number,
  from = 1,
): Promise<void> {
  const db = database.db;
  const v = valuesOf(merchantId);
  await db
    .insertInto('merchants')
    .values({
      id: merchantId,
      name: merchantId,
      mode: 'test',
      status: 'active',
      callback_url: null,
      vpa: 'shop@bank',
      webhook_secret: 'whsec',
      created_at: v.now,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
  await db
    .insertInto('api_keys')
    .values({
      id: `key_${merchantId}`,
      merchant_id: merchantId,
      key_hash: v.keyHash,
      key_prefix: 'k',
      created_at: v.now,
      revoked_at: null,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
  await db
    .insertInto('wallets')
    .values({ merchant_id: merchantId, currency: 'INR', available: 1_000_000, held: 0, updated_at: v.now })
    .onConflict((oc) => oc.doNothing())
    .execute();
  const later = v.now + 86_400_000;
  const to = from + rows - 1;
  for (let lo = from; lo <= to; lo += 1000) {
    const batch = [];
    for (let i = lo; i <= Math.min(to, lo + 999); i++) {
      const open = i % 10 === 0;
      batch.push({
        ...newPayin({ ...v, paymentId: paymentIdOf(merchantId, i), orderNo: `${merchantId}-${i}` }),
        status: open ? ('PENDING' as const) : i % 10 < 8 ? ('SUCCESS' as const) : ('FAILED' as const),
        next_action_at: open ? later : null,
        created_at: v.now - 10_000_000 + i,
      });
    }
    await insertTransactions(db, batch);
    const tenth = batch.filter((_, k) => k % 10 === 0);
    const ids = await enqueueDeliveries(
      db,
      tenth.map((t) => ({
        paymentId: t.payment_id,
        merchantId,
        url: 'http://127.0.0.1/cb',
        body: '{}',
        maxAttempts: 5,
      })),
      v.now,
    );
    if (ids.length > 1)
      await db
        .updateTable('callback_deliveries')
        .set({ status: 'delivered', next_attempt_at: null })
        .where('id', 'in', ids.slice(1))
        .execute();
    await insertChannelEvents(
      db,
      tenth.map((t) => ({
        provider: 'setu',
        event_id: `ev_${t.payment_id}`,
        payment_id: t.payment_id,
        reference: t.payment_id,
        type: 't',
        body: '{}',
      })),
      'applied',
      v.now,
      null,
    );
  }
}
