/** Operations endpoints, outside the API's key check: liveness, readiness, Prometheus metrics, OpenAPI. */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import type { Database } from './db/database.ts';
import { AppError } from './errors.ts';
import type { Metrics } from './http/metrics.ts';

const LANDING = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Paygate</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}a{color:#0b57d0}</style>
</head>
<body>
<h1>Paygate</h1>
<p>A merchant payment gateway: pay-ins, payouts, status queries and signed callbacks.</p>
<ul>
<li><a href="dashboard">The console</a> for merchants and operators (sign in with a user from <code>paygate user create</code>)</li>
<li><a href="docs">API reference</a> (Swagger UI) and <a href="openapi.json">the OpenAPI document</a></li>
<li><a href="healthz">Health</a> · <a href="readyz">readiness</a></li>
<li>First steps: the walk-through with curl in the project's README.md, and docs/integration.md</li>
</ul>
</body>
</html>
`;

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
  // The front page: where to go from here, for someone who opened the gateway's address.
  app.get('/', { schema: { hide: true } }, async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header(
        'content-security-policy',
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      )
      .send(LANDING),
  );
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
