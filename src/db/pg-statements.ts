/**
 * Named statements on PostgreSQL. A statement sent without a name is parsed, analysed and planned
 * again every time; the request paths send a few dozen texts over and over (batched statements
 * keep one text whatever their size, `json-records.ts`). Each text sent often enough gets a name,
 * so every connection parses it once and PostgreSQL keeps its plan (plan_cache_mode decides
 * between a plan for the parameters and a generic one, as for any prepared statement).
 *
 * A text gets a name on its `NAME_AFTER`th use, and at most `MAX_NAMED` texts are named per
 * process: texts made up once (an operator's filter, an IN list of a new length) stay unnamed, so
 * what each connection keeps on the server stays bounded. A named statement whose table changed
 * shape under it (`paygate migrate` adding a column while this process runs) fails with 0A000
 * ("cached plan must not change result type"): the names are then dropped and given afresh, so
 * that statement fails once in this process and is parsed again on its next use.
 */
import type pg from 'pg';

const NAME_AFTER = 3;
const MAX_NAMED = 200;
/** Texts counted before they reach NAME_AFTER; the counts start over past this many. */
const MAX_COUNTED = 5000;

export class StatementNames {
  private generation = 0;
  private readonly names = new Map<string, string>();
  private readonly uses = new Map<string, number>();

  /** The name `text` is sent under, or undefined while it is sent unnamed. */
  nameOf(text: string): string | undefined {
    const name = this.names.get(text);
    if (name !== undefined || this.names.size >= MAX_NAMED) return name;
    const uses = (this.uses.get(text) ?? 0) + 1;
    if (uses < NAME_AFTER) {
      if (this.uses.size >= MAX_COUNTED) this.uses.clear();
      this.uses.set(text, uses);
      return undefined;
    }
    this.uses.delete(text);
    const named = `paygate_${this.generation}_${this.names.size}`;
    this.names.set(text, named);
    return named;
  }

  /** Every text is unnamed again, and named afresh under new names. */
  forget(): void {
    this.generation++;
    this.names.clear();
    this.uses.clear();
  }

  get size(): number {
    return this.names.size;
  }
}

/** PostgreSQL's code for "cached plan must not change result type". */
const CACHED_PLAN_CHANGED = '0A000';

/**
 * Sends `client`'s statements that carry parameters under their names from `names`. Statements
 * without parameters (BEGIN, COMMIT) keep the simple protocol's single message.
 */
export function nameStatements(client: pg.PoolClient, names: StatementNames): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((...args: unknown[]) => {
    const [text, values] = args;
    if (args.length !== 2 || typeof text !== 'string' || !Array.isArray(values) || values.length === 0)
      return query(...args);
    const name = names.nameOf(text);
    if (name === undefined) return query(text, values);
    return (query({ name, text, values }) as Promise<unknown>).catch((err: unknown) => {
      if ((err as { code?: unknown }).code === CACHED_PLAN_CHANGED) names.forget();
      throw err;
    });
  }) as typeof client.query;
}
