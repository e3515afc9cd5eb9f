/**
 * Exceptions (CONTRACT §11, §13): the list, one exception, and resolving it (a confirmation step for
 * money actions). An operator sees and resolves every one; a merchant's user reads those naming its
 * merchant or its transactions (another's is 404) and cannot resolve any (a post is 404).
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.ts';
import { ACTIONS, type ResolveAction } from '../../exceptions/exceptions.service.ts';
import { base62 } from '../../ids.ts';
import { formatAmount } from '../../money.ts';
import { page } from '../views/layout.ts';
import { notificationsCard } from '../views/manage.ts';
import { confirmBody, exceptionBody, exceptionsBody } from '../views/exceptions.ts';
import { badQuery, field, form, html, redirect, type DashboardContext } from './http.ts';
import { operatorOnly } from './session.routes.ts';

const FORM_ID = /^[A-Za-z0-9]{22}$/;
const ID = /^[1-9]\d{0,15}$/;

function exceptionId(text: string): number {
  if (!ID.test(text)) throw badQuery(`There is no exception ${text.slice(0, 20)}.`);
  return Number(text);
}

export function exceptionRoutes(app: FastifyInstance, { dashboard, user, frame }: DashboardContext): void {
  const { oversight } = dashboard;
  app.get('/exceptions', { schema: { hide: true } }, async (req, reply) => {
    const u = user(req);
    const silence = u.role === 'operator' ? notificationsCard(await oversight.channelSilence()) : '';
    return html(
      reply,
      200,
      page(
        frame(req, 'exceptions', 'Channel exceptions'),
        silence + exceptionsBody(u, await oversight.exceptions(u)),
      ),
    );
  });

  app.get<{ Params: { id: string } }>('/exceptions/:id', { schema: { hide: true } }, async (req, reply) => {
    const u = user(req);
    const text = req.params.id;
    // A merchant's user cannot tell a malformed id from another merchant's exception: 404 for both.
    if (u.role !== 'operator' && !ID.test(text))
      throw new AppError('NOT_FOUND', 'There is no such exception.');
    const e = await oversight.exception(u, exceptionId(text));
    return html(
      reply,
      200,
      page(
        frame(req, 'exceptions', `Exception #${e.id}`),
        exceptionBody(u, e, u.role === 'operator' ? await dashboard.merchants() : []),
      ),
    );
  });

  app.post<{ Params: { id: string } }>(
    '/exceptions/:id/resolve',
    { schema: { hide: true }, preHandler: operatorOnly },
    async (req, reply) => {
      const id = exceptionId(req.params.id);
      const body = form(req);
      const action = field(body, 'action');
      if (!(ACTIONS as readonly string[]).includes(action))
        throw badQuery(`The action must be one of ${ACTIONS.join(', ')}.`);
      const fields = { merchant: field(body, 'merchant'), note: field(body, 'note') };
      const e = await oversight.exception(user(req), id);
      // Checked before the confirmation, so that the confirmation never offers what would be refused.
      await oversight.checkResolution(id, action as ResolveAction, fields);
      const moves = action !== 'dismiss' || (e.holds !== null && e.outstanding > 0);
      if (moves && field(body, 'confirm') !== 'yes') {
        const what =
          action === 'refund'
            ? `${formatAmount(e.outstanding)} ${e.currency} goes back to the customer from suspense.`
            : action === 'credit'
              ? `${formatAmount(e.outstanding)} ${e.currency} is credited to merchant ${fields.merchant || e.merchant_id}.`
              : action === 'debit'
                ? `Up to ${formatAmount(e.outstanding)} ${e.currency} is taken from merchant ${e.merchant_id}'s available balance.`
                : action === 'dispute-lost'
                  ? `The disputed ${e.amount === null ? 'amount' : `${formatAmount(e.amount)} ${e.currency}`}, up to what of pay-in ${e.payment_id ?? '-'} is still refundable, goes back to the customer from merchant ${e.merchant_id ?? '-'}'s balance; what it lacks is owed.`
                  : action === 'dispute-won'
                    ? 'The dispute closes; the pay-in can be refunded again.'
                    : `${formatAmount(e.outstanding)} ${e.currency} is written off.`;
        return html(
          reply,
          200,
          page(
            frame(req, 'exceptions', `Confirm exception #${id}`, null),
            confirmBody(user(req), e, action, fields, base62(22), what),
          ),
        );
      }
      const formId = field(body, 'form_id');
      if (moves && !FORM_ID.test(formId))
        throw badQuery('The confirmation is incomplete. Reload the page and try again.');
      await oversight.resolveException(user(req), id, action as ResolveAction, fields, moves ? formId : null);
      return redirect(reply, `/dashboard/exceptions/${id}`, 'resolved');
    },
  );
}
