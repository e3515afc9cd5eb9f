/** Operations endpoints, outside the API's key check: liveness, readiness, Prometheus metrics, OpenAPI. */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import type { Database } from './db/database.ts';
import { AppError } from './errors.ts';
import type { Metrics } from './http/metrics.ts';

/** Whether `header` is `Bearer TOKEN`, compared in constant time. */
function bearerIs(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export const opsRoutes: FastifyPluginAsync<{
  database: Database;
  metrics: Metrics;
  /** METRICS_TOKEN: when set, `/metrics` needs it as a bearer token. */
  metricsToken: string | null;
}> = async (app, { database, metrics, metricsToken }) => {
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
  app.get('/metrics', { schema: { tags, summary: 'Prometheus metrics' } }, async (req, reply) => {
    if (metricsToken !== null && !bearerIs(req.headers.authorization, metricsToken)) {
      throw req.headers.authorization === undefined
        ? new AppError('AUTH_MISSING', 'Authorization: Bearer METRICS_TOKEN is required')
        : new AppError('AUTH_INVALID_API_KEY', 'The metrics token is not valid');
    }
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
};
