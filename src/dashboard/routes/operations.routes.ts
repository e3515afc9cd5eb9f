/** The operators' checks: the ledger check and the audit log. */
import type { FastifyInstance } from 'fastify';
import { page } from '../views/layout.ts';
import { activityTable, verifyBody } from '../views/manage.ts';
import { html, type DashboardContext } from './http.ts';

export function operationsRoutes(ops: FastifyInstance, { dashboard, frame }: DashboardContext): void {
  ops.get('/verify', { schema: { hide: true } }, async (req, reply) =>
    html(reply, 200, page(frame(req, 'verify', 'Ledger check'), verifyBody(await dashboard.verify()))),
  );
  ops.get('/activity', { schema: { hide: true } }, async (req, reply) =>
    html(
      reply,
      200,
      page(frame(req, 'activity', 'Activity'), activityTable(await dashboard.activity(null), true)),
    ),
  );
}
