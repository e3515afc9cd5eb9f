/** The operators' merchant pages: the list, creating one, one merchant, crediting it and its status. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MerchantStatus } from '../../db/schema.ts';
import { AppError } from '../../errors.ts';
import type { CreatedMerchant } from '../../merchants/merchants.service.ts';
import { parseAmountText } from '../../money.ts';
import { page } from '../views/layout.ts';
import { merchantBody, merchantsBody, secretShown, type MerchantForm } from '../views/manage.ts';
import { accessRoutes } from './access.routes.ts';
import { badQuery, field, form, html, redirect, type DashboardContext } from './http.ts';

/** A money form's one-time id (the credit form's hidden `form_id`). */
const FORM_ID = /^[A-Za-z0-9]{22}$/;

/**
 * The create-merchant form: the new merchant's key and secret, shown once; or a refusal the
 * operator can act on (a live merchant without Setu, a bad name, UPI id or URL) told above the
 * form, filled in as it was sent, and nothing created.
 */
async function createMerchant(
  { dashboard, user, frame }: DashboardContext,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const body = form(req);
  const sent: MerchantForm = {
    name: field(body, 'name').trim(),
    callbackUrl: field(body, 'callback_url').trim() || null,
    vpa: field(body, 'vpa').trim() || null,
    live: field(body, 'mode') === 'live',
  };
  let created: CreatedMerchant;
  try {
    if (sent.name.length < 1 || sent.name.length > 100)
      throw badQuery('The name must be 1 to 100 characters.');
    created = await dashboard.createMerchant(user(req), sent);
  } catch (err) {
    if (!(err instanceof AppError) || err.statusCode === 404 || err.statusCode >= 500) throw err;
    return html(
      reply,
      err.statusCode,
      page(
        frame(req, 'merchants', 'Merchants', { text: `Not created: ${err.message}`, error: true }),
        merchantsBody(user(req), await dashboard.merchants(), sent),
      ),
    );
  }
  const home = `/dashboard/merchants/${created.merchant_id}`;
  return html(
    reply,
    201,
    page(
      frame(req, 'merchants', `Merchant ${created.name} created`, null),
      `${secretShown('api-key', 'API key', created.api_key, home)}${secretShown('webhook-secret', 'Webhook secret', created.webhook_secret, home)}`,
    ),
  );
}

export function merchantRoutes(ops: FastifyInstance, ctx: DashboardContext): void {
  const { dashboard, currencies, user, frame } = ctx;

  ops.get('/merchants', { schema: { hide: true } }, async (req, reply) =>
    html(
      reply,
      200,
      page(frame(req, 'merchants', 'Merchants'), merchantsBody(user(req), await dashboard.merchants())),
    ),
  );

  ops.post('/merchants', { schema: { hide: true } }, (req, reply) => createMerchant(ctx, req, reply));

  ops.get<{ Params: { id: string } }>('/merchants/:id', { schema: { hide: true } }, async (req, reply) => {
    const m = await dashboard.merchant(req.params.id);
    const [{ wallets }, activity] = await Promise.all([dashboard.overview(m.id), dashboard.activity(m.id)]);
    return html(
      reply,
      200,
      page(
        frame(req, 'merchants', m.name),
        merchantBody(user(req), m, wallets, currencies, activity, dashboard.secretOverlapUntil(m)),
      ),
    );
  });

  ops.post<{ Params: { id: string } }>(
    '/merchants/:id/credit',
    { schema: { hide: true } },
    async (req, reply) => {
      const body = form(req);
      const amount = parseAmountText(field(body, 'amount'));
      if (amount === null || amount <= 0)
        throw badQuery(
          'The amount must be a positive number of rupees with at most 2 decimals, such as 1000.00.',
        );
      const formId = field(body, 'form_id');
      if (!FORM_ID.test(formId))
        throw badQuery('The credit form is incomplete. Reload the page and try again.');
      await dashboard.credit(user(req), req.params.id, field(body, 'currency') || 'INR', amount, formId);
      return redirect(reply, `/dashboard/merchants/${req.params.id}`, 'credited');
    },
  );

  ops.post<{ Params: { id: string } }>(
    '/merchants/:id/status',
    { schema: { hide: true } },
    async (req, reply) => {
      const status = field(form(req), 'status');
      if (status !== 'active' && status !== 'disabled') throw badQuery('status must be active or disabled');
      await dashboard.setStatus(user(req), req.params.id, status as MerchantStatus);
      return redirect(
        reply,
        `/dashboard/merchants/${req.params.id}`,
        status === 'active' ? 'enabled' : 'disabled',
      );
    },
  );
  accessRoutes(ops, ctx, '/merchants/:id', (req) => (req.params as { id: string }).id, 'merchants');
}
