/** The operators' reconciliation pages: the runs, and one run's differences. */
import type { FastifyInstance } from 'fastify';
import { page } from '../views/layout.ts';
import { runBody, runsBody } from '../views/reconcile.ts';
import { badQuery, failure, html, stringQuery, type DashboardContext } from './http.ts';

const PAGE = 50;
const ID = /^[1-9]\d{0,14}$/;

export function reconcileRoutes(ops: FastifyInstance, { dashboard, frame }: DashboardContext): void {
  ops.get('/reconcile', { schema: { hide: true } }, async (req, reply) => {
    const before = stringQuery(req).before;
    if (before !== undefined && !ID.test(before)) throw badQuery('before must be a run number');
    const runs = await dashboard.reconcileRuns(PAGE + 1, before === undefined ? undefined : Number(before));
    const next = runs.length > PAGE ? runs[PAGE - 1]!.id : null;
    return html(
      reply,
      200,
      page(frame(req, 'reconcile', 'Reconciliation'), runsBody(runs.slice(0, PAGE), next)),
    );
  });
  ops.get<{ Params: { id: string } }>('/reconcile/:id', { schema: { hide: true } }, async (req, reply) => {
    const found = ID.test(req.params.id) ? await dashboard.reconcileRun(Number(req.params.id)) : null;
    if (!found) return failure(reply, 404, 'There is no such reconciliation run.', true);
    return html(
      reply,
      200,
      page(frame(req, 'reconcile', `Reconciliation ${found.run.date}`), runBody(found.run, found.mismatches)),
    );
  });
}
