/**
 * The dashboard scenario's filters of the transactions list: the query strings its form sends, and
 * the same filters read with SQL straight from the database (how many rows match, the cursor of a
 * row deep in the order, the days an export of a given size covers), to check the pages against.
 */
import { DAY_MS, IST_OFFSET_MS, istDate, istDayBounds } from '../src/ist.ts';
import type { RawConnection } from './store.ts';

/** The list's query as the dashboard's filter form sends it (amounts in rupees). */
export interface ListQuery {
  kind?: 'payin' | 'payout';
  status?: 'PENDING' | 'PROCESSING' | 'SUCCESS' | 'FAILED';
  from?: string;
  to?: string;
  min?: string;
  max?: string;
  q?: string;
}

/** The filters the scenario reads the list with (CONTRACT §11: IST days, `to` inclusive). */
export interface ListFilters {
  /** The last whole IST day before today: the list's last day, and the export's. */
  to: string;
  /** Successful pay-ins of the last `listDays` whole IST days before today. */
  list: ListQuery;
  /** The same days' failed pay-ins: a seventh as many rows, so a cursor 90 % in lies further back. */
  failed: ListQuery;
  /**
   * A wide amount band (about a third of the rows), a narrow one (about 0.1 %) and one that
   * matches nothing: the index gives the rows in order, and the amount is checked row by row
   * until a page is full or the range ends.
   */
  wide: ListQuery;
  narrow: ListQuery;
  /** Above every loaded amount (₹1,00,000.00 at most): nothing matches, so the whole range is read. */
  none: ListQuery;
}

export function listFilters(now: number, listDays: number): ListFilters {
  const to = istDate(now - DAY_MS);
  const list: ListQuery = { kind: 'payin', status: 'SUCCESS', from: istDate(now - listDays * DAY_MS), to };
  return {
    to,
    list,
    failed: { ...list, status: 'FAILED' },
    wide: { ...list, min: '100.00', max: '5000.00' },
    narrow: { ...list, min: '99000.00', max: '100000.00' },
    none: { ...list, min: '100000.01' },
  };
}

function queryString(query: ListQuery, after?: string): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
  if (after !== undefined) params.set('after', after);
  return params.toString();
}

/** The list's page for `query`, after the cursor `after` when given. */
export function listPath(query: ListQuery, after?: string): string {
  return `/dashboard/transactions?${queryString(query, after)}`;
}

/** The CSV export of `query`. */
export function csvPath(query: ListQuery): string {
  return `/dashboard/transactions.csv?${queryString(query)}`;
}

/** Rupees as the form takes them ("5000.00") to paise. */
function paise(rupees: string): number {
  return Math.round(Number(rupees) * 100);
}

/** The WHERE clause of a list query over one merchant's rows, for counting with SQL. */
function whereOf(
  conn: RawConnection,
  merchantId: string,
  query: ListQuery,
): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return conn.kind === 'sqlite' ? '?' : `$${params.length}`;
  };
  const parts = [`merchant_id = ${p(merchantId)}`];
  if (query.kind) parts.push(`kind = ${p(query.kind)}`);
  if (query.status) parts.push(`status = ${p(query.status)}`);
  if (query.from) parts.push(`created_at >= ${p(istDayBounds(query.from).from)}`);
  if (query.to) parts.push(`created_at < ${p(istDayBounds(query.to).to)}`);
  if (query.min) parts.push(`amount >= ${p(paise(query.min))}`);
  if (query.max) parts.push(`amount <= ${p(paise(query.max))}`);
  if (query.q) parts.push(`merchant_order_no = ${p(query.q)}`);
  return { text: parts.join(' and '), params };
}

/** Rows of the merchant that `query` matches. */
export async function countOf(conn: RawConnection, merchantId: string, query: ListQuery): Promise<number> {
  const w = whereOf(conn, merchantId, query);
  const [row] = await conn.rows<{ n: number | string }>(
    `select count(*) as n from transactions where ${w.text}`,
    w.params,
  );
  return Number(row?.n ?? 0);
}

/** The list's cursor (`created_at.payment_id`) of the row `offset` rows into the filter's order. */
export async function cursorAt(
  conn: RawConnection,
  merchantId: string,
  query: ListQuery,
  offset: number,
): Promise<string | null> {
  const w = whereOf(conn, merchantId, query);
  const [row] = await conn.rows<{ created_at: number | string; payment_id: string }>(
    `select created_at, payment_id from transactions where ${w.text}
     order by created_at desc, payment_id desc limit 1 offset ${Math.max(0, Math.floor(offset))}`,
    w.params,
  );
  return row ? `${row.created_at}.${row.payment_id}` : null;
}

/**
 * The export's filter: `base` over the newest whole IST days before today until about `target`
 * rows match (counted with SQL per day), so that the export's size does not hang on the load's
 * exact spread.
 */
export async function exportQuery(
  conn: RawConnection,
  merchantId: string,
  base: ListQuery,
  to: string,
  target: number,
): Promise<ListQuery> {
  const w = whereOf(conn, merchantId, { ...base, to });
  const days = await conn.rows<{ d: number | string; n: number | string }>(
    `select (created_at + ${IST_OFFSET_MS}) / ${DAY_MS} as d, count(*) as n from transactions
     where ${w.text} group by (created_at + ${IST_OFFSET_MS}) / ${DAY_MS} order by d desc`,
    w.params,
  );
  let sum = 0;
  let from = to;
  for (const day of days) {
    sum += Number(day.n);
    // d counts IST days since the epoch, so d days after it is that IST day's date.
    from = new Date(Number(day.d) * DAY_MS).toISOString().slice(0, 10);
    if (sum >= target) break;
  }
  return { ...base, from, to };
}
