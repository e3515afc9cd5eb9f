/** The transactions: the filtered list, its CSV export, one transaction, and resending its callback. */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Flow, TransactionKind, TransactionStatus } from '../../db/schema.ts';
import { AppError } from '../../errors.ts';
import { parseAmountText } from '../../money.ts';
import { CSV_HEADER, csvLine, csvRow } from '../csv.ts';
import { type ListCursor, type TransactionFilter } from '../dashboard.repository.ts';
import { page } from '../views/layout.ts';
import { detailBody, listBody, QUERY_KEYS, type ListQuery } from '../views/transactions.ts';
import { badQuery, field, form, html, redirect, stringQuery, type DashboardContext } from './http.ts';
import { DAY_MS, istDayStart } from '../../ist.ts';

const KINDS = new Set<string>(['payin', 'payout', 'refund']);
const FLOWS = new Set<string>(['onsite', 'offsite', 'p2p', 'payout', 'refund']);
/** A money form's one-time id (the refund form's hidden `form_id`). */
const FORM_ID = /^[A-Za-z0-9]{22}$/;
const STATUSES = new Set<string>(['PENDING', 'PROCESSING', 'SUCCESS', 'FAILED']);
const CURSOR = /^(\d{1,15})\.([A-Za-z0-9]{1,64})$/;

export function transactionRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  const { dashboard, user, frame } = ctx;

  app.get('/transactions', { schema: { hide: true } }, async (req, reply) => {
    const { query, filter, cursor } = await listRequest(ctx, req);
    const rows = await dashboard.transactions(filter, cursor);
    const last = rows.length === 50 ? rows[rows.length - 1]! : null;
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

  app.post<{ Params: { id: string } }>(
    '/transactions/:id/resend',
    { schema: { hide: true } },
    async (req, reply) => {
      try {
        await dashboard.resend(user(req), req.params.id);
      } catch (err) {
        if (!(err instanceof AppError) || err.statusCode === 404 || err.statusCode >= 500) throw err;
        for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
        const detail = await dashboard.transaction(user(req), req.params.id);
        return html(
          reply,
          err.statusCode,
          page(
            frame(req, 'transactions', 'Transaction', { text: err.message, error: true }),
            detailBody(user(req), detail),
          ),
        );
      }
      return redirect(reply, `/dashboard/transactions/${req.params.id}`, 'resent');
    },
  );

  // A refund of a SUCCESS pay-in, through the API's path; the form is taken once (a double click
  // refunds once) and the action is audited.
  app.post<{ Params: { id: string } }>(
    '/transactions/:id/refund',
    { schema: { hide: true } },
    async (req, reply) => {
      const body = form(req);
      const amount = parseAmountText(field(body, 'amount').trim());
      if (amount === null || amount <= 0)
        throw badQuery(
          'The amount must be a positive number of rupees with at most 2 decimals, such as 100.00.',
        );
      const formId = field(body, 'form_id');
      if (!FORM_ID.test(formId))
        throw badQuery('The refund form is incomplete. Reload the page and try again.');
      const reason = field(body, 'reason').trim();
      if (reason.length > 100) throw badQuery('The reason is at most 100 characters.');
      try {
        await dashboard.refund(user(req), req.params.id, amount, reason || null, formId);
      } catch (err) {
        if (!(err instanceof AppError) || err.statusCode === 404 || err.statusCode >= 500) throw err;
        const detail = await dashboard.transaction(user(req), req.params.id);
        return html(
          reply,
          err.statusCode,
          page(
            frame(req, 'transactions', 'Transaction', { text: err.message, error: true }),
            detailBody(user(req), detail),
          ),
        );
      }
      return redirect(reply, `/dashboard/transactions/${req.params.id}`, 'refunded');
    },
  );
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
