/**
 * Rows handed to a batched statement as one JSON parameter and read back as a derived table
 * (`from ${jsonRecords(db, rows, columns)} as r`), so that the statement's text is the same for
 * one row or a hundred: each database then prepares and caches it once. graphile-worker passes
 * its batches the same way. SQLite reads the array with `jsonb_each`, PostgreSQL with
 * `jsonb_to_recordset`.
 */
import { PostgresAdapter, sql, type RawBuilder } from 'kysely';

/** The columns of the table and their PostgreSQL types, in order; each row's keys are these names. */
export type RecordColumns = Readonly<Record<string, 'text' | 'bigint' | 'integer'>>;

interface ColumnTexts {
  /** `a, b, c` */
  list: string;
  /** PostgreSQL's record definition: `a text, b bigint, …` */
  definition: string;
  /** SQLite's selection from `jsonb_each`: `value ->> 'a' as a, …` */
  selection: string;
}

/** The texts of each columns object, made once: batches are written on the request paths. */
const texts = new WeakMap<RecordColumns, ColumnTexts>();

function textsOf(columns: RecordColumns): ColumnTexts {
  let t = texts.get(columns);
  if (!t) {
    const names = Object.keys(columns);
    // Column names are the code's own constants; checked anyway, since they are written into SQL.
    for (const name of names)
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a column name: ${name}`);
    t = {
      list: names.join(', '),
      definition: names.map((name) => `${name} ${columns[name]}`).join(', '),
      selection: names.map((name) => `value ->> '${name}' as ${name}`).join(', '),
    };
    texts.set(columns, t);
  }
  return t;
}

type Executor = { getExecutor(): { readonly adapter: unknown } };

export function jsonRecords(
  db: Executor,
  rows: readonly object[],
  columns: RecordColumns,
): RawBuilder<unknown> {
  const json = JSON.stringify(rows);
  const t = textsOf(columns);
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // PostgreSQL plans a set-returning function for 100 rows whatever it returns; the LIMIT (the
    // batch's size, a parameter) tells it the real number, so that joining a batch of one to a
    // table without statistics goes through the table's key instead of reading all of it.
    return sql`(select * from jsonb_to_recordset(cast(${json} as jsonb)) as r(${sql.raw(t.definition)}) limit ${rows.length})`;
  }
  // jsonb_each hands each element over in SQLite's binary JSON, so reading its columns does not
  // parse the element's text again once per column (json_each would).
  return sql`(select ${sql.raw(t.selection)} from jsonb_each(${json}))`;
}

/**
 * `insert into TABLE (columns) select columns from (the rows) as r`: the rows of a batch into a
 * table whose column names are the keys of `columns`. A statement may go on after it (`where true
 * on conflict …`).
 */
export function insertRecords(
  db: Executor,
  table: string,
  rows: readonly object[],
  columns: RecordColumns,
): RawBuilder<unknown> {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`not a table name: ${table}`);
  const list = sql.raw(textsOf(columns).list);
  return sql`insert into ${sql.raw(table)} (${list}) select ${list} from ${jsonRecords(db, rows, columns)} as r`;
}
