/**
 * A merchant's access: its key and secret rotation and its callback URL, on the developers' page for
 * the merchant's own users and on the merchant's page for an operator.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import { page } from '../views/layout.ts';
import { activityTable, accessActions, merchantFacts, secretOverlap, secretShown } from '../views/manage.ts';
import { field, form, html, redirect, type DashboardContext } from './http.ts';

/** Rotate-key, rotate-secret and callback-url actions under `path`, for the merchant `merchantOf` names. */
export function accessRoutes(
  scope: FastifyInstance,
  { dashboard, user, frame }: DashboardContext,
  path: string,
  merchantOf: (req: FastifyRequest) => string | null,
  active: string,
): void {
  const target = (req: FastifyRequest) => {
    const id = merchantOf(req);
    if (id === null) throw new AppError('NOT_FOUND', 'Operators rotate keys on a merchant’s page.');
    return id;
  };
  const back = (req: FastifyRequest) =>
    path === '/developers' ? '/dashboard/developers' : `/dashboard/merchants/${target(req)}`;
  scope.post(`${path}/rotate-key`, { schema: { hide: true } }, async (req, reply) => {
    const r = await dashboard.rotateKey(user(req), target(req));
    return html(
      reply,
      200,
      page(frame(req, active, 'New API key', null), secretShown('api-key', 'API key', r.api_key, back(req))),
    );
  });
  scope.post(`${path}/rotate-secret`, { schema: { hide: true } }, async (req, reply) => {
    const r = await dashboard.rotateSecret(user(req), target(req));
    return html(
      reply,
      200,
      page(
        frame(req, active, 'New webhook secret', null),
        secretShown(
          'webhook-secret',
          'Webhook secret',
          r.webhook_secret,
          back(req),
          secretOverlap(r.previous_secret_until === null ? null : Date.parse(r.previous_secret_until)),
        ),
      ),
    );
  });
  scope.post(`${path}/callback-url`, { schema: { hide: true } }, async (req, reply) => {
    const url = field(form(req), 'callback_url').trim();
    await dashboard.setCallbackUrl(user(req), target(req), url === '' ? null : url);
    return redirect(reply, back(req), 'callback');
  });
}

/** The developers' page is a merchant user's; an operator finds the same actions on a merchant's page. */
export function developerRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  const { dashboard, user, frame } = ctx;
  app.get('/developers', { schema: { hide: true } }, async (req, reply) => {
    const u = user(req);
    if (u.merchantId === null) return redirect(reply, '/dashboard/merchants');
    const m = await dashboard.merchant(u.merchantId);
    const activity = await dashboard.merchantActivity(u.merchantId);
    return html(
      reply,
      200,
      page(
        frame(req, 'developers', 'Developers'),
        `${merchantFacts(m)}${accessActions(u, m, '/dashboard/developers', dashboard.secretOverlapUntil(m))}<section aria-labelledby="act-h"><h2 id="act-h">Activity</h2>${activityTable(activity, false)}</section>`,
      ),
    );
  });
  accessRoutes(app, ctx, '/developers', (req) => user(req).merchantId, 'developers');
}
