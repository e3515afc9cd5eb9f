/** What a user can do from one transaction's page: resend its callback, and refund a pay-in. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import { base62 } from '../../ids.ts';
import { parseAmountText } from '../../money.ts';
import { page } from '../views/layout.ts';
import { refundConfirmBody } from '../views/refund.ts';
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
function refundForm(req: ById): { amount: number; reason: string | null; confirmed: string | null } {
  const body = form(req);
  const amount = parseAmountText(field(body, 'amount').trim());
  if (amount === null || amount <= 0)
    throw badQuery('The amount must be a positive number of rupees with at most 2 decimals, such as 100.00.');
  const reason = field(body, 'reason').trim();
  if (reason.length > 100) throw badQuery('The reason is at most 100 characters.');
  if (field(body, 'confirm') !== 'yes') return { amount, reason: reason || null, confirmed: null };
  // The confirmation carries the one-time id that makes a double click refund once.
  const formId = field(body, 'form_id');
  if (!FORM_ID.test(formId)) throw badQuery('The confirmation is incomplete. Reload the page and try again.');
  return { amount, reason: reason || null, confirmed: formId };
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

  // A refund of a SUCCESS pay-in, in two steps: the typed amount is checked and shown on a second
  // screen that names the amount, the pay-in and the customer; only its Confirm refunds, through the
  // API's path, once per confirmation (a double click refunds once), audited.
  app.post<{ Params: { id: string } }>(
    '/transactions/:id/refund',
    { schema: { hide: true } },
    async (req, reply) => {
      const { amount, reason, confirmed } = refundForm(req);
      try {
        if (confirmed === null) {
          const detail = await dashboard.refundPreview(user(req), req.params.id, amount);
          return html(
            reply,
            200,
            page(
              ctx.frame(req, 'transactions', 'Confirm refund', null),
              refundConfirmBody(user(req), detail.txn, { amount, reason, formId: base62(22) }),
            ),
          );
        }
        await dashboard.refund(user(req), req.params.id, amount, reason, confirmed);
      } catch (err) {
        if (!shownOnPage(err)) throw err;
        return refusedPage(ctx, req, reply, err);
      }
      return redirect(reply, `/dashboard/transactions/${req.params.id}`, 'refunded');
    },
  );
}
