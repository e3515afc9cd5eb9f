/** Operations endpoints, outside the API's key check: liveness, readiness, Prometheus metrics, OpenAPI. */
import type { FastifyPluginAsync } from 'fastify';
import type { Database } from './db/database.ts';
import { AppError } from './errors.ts';
import type { Metrics } from './http/metrics.ts';

export const opsRoutes: FastifyPluginAsync<{ database: Database; metrics: Metrics }> = async (
  app,
  { database, metrics },
) => {
  const tags = ['Operations'];
  app.get('/healthz', { schema: { tags, summary: 'The process is up' } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { tags, summary: 'The process can reach its database' } }, async () => {
    try {
      await database.ping();
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', 'Storage is unreachable', {}, { 'Retry-After': '5' });
    }
    return { status: 'ok', database: database.kind };
  });
  app.get('/openapi.json', { schema: { tags, summary: 'This API as an OpenAPI 3 document' } }, async () =>
    app.swagger(),
  );
  app.get('/metrics', { schema: { tags, summary: 'Prometheus metrics' } }, async (_req, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
};
