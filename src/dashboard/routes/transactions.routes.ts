/** The transactions: the filtered list, its CSV export, and one transaction (its actions: `transaction-actions.routes.ts`). */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Flow, TransactionKind, TransactionStatus } from '../../db/schema.ts';
import { parseAmountText } from '../../money.ts';
import { CSV_HEADER, csvLine, csvRow } from '../csv.ts';
import { type ListCursor, type TransactionFilter } from '../dashboard.repository.ts';
import { PAGE_SIZE } from '../dashboard.service.ts';
import { page } from '../views/layout.ts';
import { detailBody, listBody, QUERY_KEYS, type ListQuery } from '../views/transactions.ts';
import { badQuery, html, stringQuery, type DashboardContext } from './http.ts';
import { DAY_MS, istDayStart } from '../../ist.ts';

const KINDS = new Set<string>(['payin', 'payout', 'refund']);
const FLOWS = new Set<string>(['onsite', 'offsite', 'p2p', 'payout', 'refund']);
const STATUSES = new Set<string>(['PENDING', 'PROCESSING', 'SUCCESS', 'FAILED']);
const CURSOR = /^(\d{1,15})\.([A-Za-z0-9]{1,64})$/;

export function transactionRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  const { dashboard, user, frame } = ctx;

  app.get('/transactions', { schema: { hide: true } }, async (req, reply) => {
    const { query, filter, cursor } = await listRequest(ctx, req);
    const rows = await dashboard.transactions(filter, cursor);
    const last = rows.length === PAGE_SIZE ? rows[rows.length - 1]! : null;
    const next = last ? `${last.created_at}.${last.payment_id}` : null;
    return html(
      reply,
      200,
      page(
        frame(req, 'transactions', 'Transactions'),
        listBody(
          user(req),
          query,
          rows,
          next,
          cursor === null,
          user(req).role === 'operator' ? await dashboard.merchants() : null,
        ),
      ),
    );
  });

  app.get('/transactions.csv', { schema: { hide: true } }, async (req, reply) => {
    const { filter } = await listRequest(ctx, req);
    const batches = dashboard.exportRows(filter);
    async function* lines() {
      yield csvLine(CSV_HEADER);
      for await (const rows of batches) yield rows.map(csvRow).join('');
    }
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="transactions.csv"')
      .send(Readable.from(lines()));
  });

  app.get<{ Params: { id: string } }>('/transactions/:id', { schema: { hide: true } }, async (req, reply) => {
    const detail = await dashboard.transaction(user(req), req.params.id);
    return html(reply, 200, page(frame(req, 'transactions', 'Transaction'), detailBody(user(req), detail)));
  });
}

/** The list's filter from its query string; 400 for a value no form sends. */
async function listRequest(
  { dashboard, user }: DashboardContext,
  req: FastifyRequest,
): Promise<{ query: ListQuery; filter: TransactionFilter; cursor: ListCursor | null }> {
  const q = stringQuery(req);
  const query: ListQuery = {};
  for (const key of QUERY_KEYS) if (q[key]) query[key] = q[key].trim();
  const filter: TransactionFilter = { merchantId: await dashboard.scope(user(req), query.merchant) };
  if (user(req).role !== 'operator') delete query.merchant;
  if (query.kind) {
    if (!KINDS.has(query.kind)) throw badQuery('kind must be payin, payout or refund');
    filter.kind = query.kind as TransactionKind;
  }
  if (query.flow) {
    if (!FLOWS.has(query.flow)) throw badQuery('flow must be onsite, offsite, p2p, payout or refund');
    filter.flow = query.flow as Flow;
  }
  if (query.status) {
    if (!STATUSES.has(query.status)) throw badQuery('status must be PENDING, PROCESSING, SUCCESS or FAILED');
    filter.status = query.status as TransactionStatus;
  }
  if (query.delivery) {
    if (query.delivery !== 'failed') throw badQuery('delivery must be failed');
    filter.deliveryFailed = true;
  }
  for (const key of ['from', 'to'] as const) {
    if (!query[key]) continue;
    const start = istDayStart(query[key]);
    if (start === null) throw badQuery(`${key} must be a date, YYYY-MM-DD`);
    if (key === 'from') filter.from = start;
    else filter.to = start + DAY_MS;
  }
  for (const key of ['min', 'max'] as const) {
    if (!query[key]) continue;
    const paise = parseAmountText(query[key]);
    if (paise === null) throw badQuery(`${key} must be an amount in rupees, such as 500.00`);
    if (key === 'min') filter.minAmount = paise;
    else filter.maxAmount = paise;
  }
  if (query.q !== undefined) {
    if (query.q.length > 128) throw badQuery('the search is at most 128 characters');
    filter.search = query.q;
  }
  let cursor: ListCursor | null = null;
  if (q.after !== undefined) {
    const m = CURSOR.exec(q.after);
    if (!m) throw badQuery('after is not a page of this list');
    cursor = { createdAt: Number(m[1]), paymentId: m[2]! };
  }
  return { query, filter, cursor };
}
