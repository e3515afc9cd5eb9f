/** What a user can do from one transaction's page: resend its callback, and refund a pay-in. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import { parseAmountText } from '../../money.ts';
import { page } from '../views/layout.ts';
import { detailBody } from '../views/transactions.ts';
import { badQuery, field, form, html, redirect, type DashboardContext } from './http.ts';

/** A money form's one-time id (the refund form's hidden `form_id`). */
const FORM_ID = /^[A-Za-z0-9]{22}$/;

type ById = FastifyRequest<{ Params: { id: string } }>;

/**
 * Whether a refusal is told on the transaction's page (the user can act on it); a 404, a 5xx or
 * anything but an AppError goes to the error handler.
 */
function shownOnPage(err: unknown): err is AppError {
  return err instanceof AppError && err.statusCode !== 404 && err.statusCode < 500;
}

/** The transaction's page again, with the refusal's status and its message on it. */
async function refusedPage(
  { dashboard, user, frame }: DashboardContext,
  req: ById,
  reply: FastifyReply,
  err: AppError,
): Promise<FastifyReply> {
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

/** The refund form's fields, checked: 400 for an amount, form id or reason no form sends. */
function refundForm(req: ById): { amount: number; formId: string; reason: string | null } {
  const body = form(req);
  const amount = parseAmountText(field(body, 'amount').trim());
  if (amount === null || amount <= 0)
    throw badQuery('The amount must be a positive number of rupees with at most 2 decimals, such as 100.00.');
  const formId = field(body, 'form_id');
  if (!FORM_ID.test(formId)) throw badQuery('The refund form is incomplete. Reload the page and try again.');
  const reason = field(body, 'reason').trim();
  if (reason.length > 100) throw badQuery('The reason is at most 100 characters.');
  return { amount, formId, reason: reason || null };
}

export function transactionActionRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  const { dashboard, user } = ctx;

  app.post<{ Params: { id: string } }>(
    '/transactions/:id/resend',
    { schema: { hide: true } },
    async (req, reply) => {
      try {
        await dashboard.resend(user(req), req.params.id);
      } catch (err) {
        if (!shownOnPage(err)) throw err;
        for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
        return refusedPage(ctx, req, reply, err);
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
      const { amount, formId, reason } = refundForm(req);
      try {
        await dashboard.refund(user(req), req.params.id, amount, reason, formId);
      } catch (err) {
        if (!shownOnPage(err)) throw err;
        return refusedPage(ctx, req, reply, err);
      }
      return redirect(reply, `/dashboard/transactions/${req.params.id}`, 'refunded');
    },
  );
}
