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
 * shape under it (`paygate migrate` adding a column while this process runs) fails with "cached
 * plan must not change result type": every name is then dropped, each connection deallocates its
 * statements before its next one, and the texts are named afresh. The statements that meet the
 * change before that fail; the next ones are parsed again.
 */
import type pg from 'pg';

const NAME_AFTER = 3;
const MAX_NAMED = 200;
/** Texts counted before they reach NAME_AFTER; the counts start over past this many. */
const MAX_COUNTED = 5000;

export class StatementNames {
  /** Bumped by `forget`: a connection that prepared under an earlier one deallocates first. */
  generation = 0;
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

/**
 * Whether `err` says that a named statement can no longer be used as prepared: its table changed
 * shape ("cached plan must not change result type", 0A000 from the plan cache), or the server does
 * not have it (26000, after pg gave up on a statement whose parameters it could not send).
 */
function staleStatement(err: unknown): boolean {
  const e = err as { code?: unknown; routine?: unknown };
  return (e.code === '0A000' && e.routine === 'RevalidateCachedQuery') || e.code === '26000';
}

type Query = (...args: unknown[]) => Promise<unknown>;

/**
 * Sends `client`'s statements that carry parameters under their names from `names`. Statements
 * without parameters (BEGIN, COMMIT), and calls with a callback, a query object or a cursor, are
 * passed on as they are.
 */
export function nameStatements(client: pg.PoolClient, names: StatementNames): void {
  const query = client.query.bind(client) as unknown as Query;
  let generation = names.generation;
  const named = async (text: string, values: unknown[]): Promise<unknown> => {
    if (generation !== names.generation) {
      await query('deallocate all');
      (client as unknown as { connection: { parsedStatements: object } }).connection.parsedStatements = {};
      generation = names.generation;
    }
    const name = names.nameOf(text);
    if (name === undefined) return query(text, values);
    try {
      return await query({ name, text, values });
    } catch (err) {
      if (staleStatement(err) && generation === names.generation) names.forget();
      throw err;
    }
  };
  client.query = ((...args: unknown[]) => {
    const [text, values] = args;
    if (args.length !== 2 || typeof text !== 'string' || !Array.isArray(values) || values.length === 0)
      return query(...args);
    return named(text, values);
  }) as typeof client.query;
}
