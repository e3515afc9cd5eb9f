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

/** Column names are the code's own constants; checked anyway, since they are written into SQL. */
function columnList(columns: RecordColumns, each: (name: string, type: string) => string): string {
  return Object.entries(columns)
    .map(([name, type]) => {
      if (!/^[a-z_]+$/.test(name)) throw new Error(`not a column name: ${name}`);
      return each(name, type);
    })
    .join(', ');
}

export function jsonRecords(
  db: { getExecutor(): { readonly adapter: unknown } },
  rows: readonly object[],
  columns: RecordColumns,
): RawBuilder<unknown> {
  const json = JSON.stringify(rows);
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const definition = columnList(columns, (name, type) => `${name} ${type}`);
    return sql`(select * from jsonb_to_recordset(cast(${json} as jsonb)) as r(${sql.raw(definition)}))`;
  }
  const selection = columnList(columns, (name) => `value ->> '${name}' as ${name}`);
  // jsonb_each hands each element over in SQLite's binary JSON, so reading its columns does not
  // parse the element's text again once per column (json_each would).
  return sql`(select ${sql.raw(selection)} from jsonb_each(${json}))`;
}
