/**
 * Reconciliation: an operator's runs and one run's differences; a merchant's user reads the
 * differences about its own transactions (a run with none of them is 404 to it, and no run's counts,
 * which are of every merchant, are shown to it).
 */
import type { FastifyInstance } from 'fastify';
import { page } from '../views/layout.ts';
import { merchantDifferencesBody, runBody, runsBody } from '../views/reconcile.ts';
import { badQuery, failure, html, stringQuery, type DashboardContext } from './http.ts';
import { dayText } from '../views/layout.ts';

const PAGE = 50;
const ID = /^[1-9]\d{0,14}$/;

export function reconcileRoutes(app: FastifyInstance, { dashboard, user, frame }: DashboardContext): void {
  const { oversight } = dashboard;
  app.get('/reconcile', { schema: { hide: true } }, async (req, reply) => {
    const u = user(req);
    const before = stringQuery(req).before;
    if (before !== undefined && !ID.test(before))
      throw badQuery(`before must be a ${u.merchantId === null ? 'run' : 'difference'} number`);
    const beforeId = before === undefined ? undefined : Number(before);
    if (u.merchantId !== null) {
      const rows = await oversight.differences(u.merchantId, { limit: PAGE + 1, beforeId });
      const next = rows.length > PAGE ? rows[PAGE - 1]!.id : null;
      return html(
        reply,
        200,
        page(
          frame(req, 'reconcile', 'Reconciliation'),
          merchantDifferencesBody(u, rows.slice(0, PAGE), next),
        ),
      );
    }
    const runs = await oversight.reconcileRuns(PAGE + 1, beforeId);
    const next = runs.length > PAGE ? runs[PAGE - 1]!.id : null;
    return html(
      reply,
      200,
      page(frame(req, 'reconcile', 'Reconciliation'), runsBody(runs.slice(0, PAGE), next)),
    );
  });
  app.get<{ Params: { id: string } }>('/reconcile/:id', { schema: { hide: true } }, async (req, reply) => {
    const u = user(req);
    const found = ID.test(req.params.id) ? await oversight.reconcileRun(Number(req.params.id)) : null;
    if (!found) return failure(reply, 404, 'There is no such reconciliation run.', true);
    const title = `Reconciliation ${dayText(found.run.date)}`;
    if (u.merchantId !== null) {
      const rows = await oversight.differences(u.merchantId, { limit: 1000, runId: found.run.id });
      if (rows.length === 0) return failure(reply, 404, 'There is no such reconciliation run.', true);
      return html(reply, 200, page(frame(req, 'reconcile', title), merchantDifferencesBody(u, rows, null)));
    }
    return html(reply, 200, page(frame(req, 'reconcile', title), runBody(found.run, found.mismatches)));
  });
}
