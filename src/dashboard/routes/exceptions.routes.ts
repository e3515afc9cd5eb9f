/** The operators' exceptions (CONTRACT §13): the list, one exception, and resolving it (a confirmation step for money actions). */
import type { FastifyInstance } from 'fastify';
import { ACTIONS, type ResolveAction } from '../../exceptions/exceptions.service.ts';
import { base62 } from '../../ids.ts';
import { formatAmount } from '../../money.ts';
import { page } from '../views/layout.ts';
import { notificationsCard } from '../views/manage.ts';
import { confirmBody, exceptionBody, exceptionsBody } from '../views/exceptions.ts';
import { badQuery, field, form, html, redirect, type DashboardContext } from './http.ts';

const FORM_ID = /^[A-Za-z0-9]{22}$/;
const ID = /^[1-9]\d{0,15}$/;

function exceptionId(text: string): number {
  if (!ID.test(text)) throw badQuery(`There is no exception ${text.slice(0, 20)}.`);
  return Number(text);
}

export function exceptionRoutes(ops: FastifyInstance, { dashboard, user, frame }: DashboardContext): void {
  ops.get('/exceptions', { schema: { hide: true } }, async (req, reply) =>
    html(
      reply,
      200,
      page(
        frame(req, 'exceptions', 'Channel exceptions'),
        notificationsCard(await dashboard.channelSilence()) + exceptionsBody(await dashboard.exceptions()),
      ),
    ),
  );

  ops.get<{ Params: { id: string } }>('/exceptions/:id', { schema: { hide: true } }, async (req, reply) => {
    const e = await dashboard.exception(exceptionId(req.params.id));
    return html(
      reply,
      200,
      page(
        frame(req, 'exceptions', `Exception #${e.id}`),
        exceptionBody(user(req), e, await dashboard.merchants()),
      ),
    );
  });

  ops.post<{ Params: { id: string } }>(
    '/exceptions/:id/resolve',
    { schema: { hide: true } },
    async (req, reply) => {
      const id = exceptionId(req.params.id);
      const body = form(req);
      const action = field(body, 'action');
      if (!(ACTIONS as readonly string[]).includes(action))
        throw badQuery(`The action must be one of ${ACTIONS.join(', ')}.`);
      const fields = { merchant: field(body, 'merchant'), note: field(body, 'note') };
      const e = await dashboard.exception(id);
      // Checked before the confirmation, so that the confirmation never offers what would be refused.
      await dashboard.checkResolution(id, action as ResolveAction, fields);
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
      await dashboard.resolveException(user(req), id, action as ResolveAction, fields, moves ? formId : null);
      return redirect(reply, `/dashboard/exceptions/${id}`, 'resolved');
    },
  );
}
