/**
 * HTTP of the dashboard under `/dashboard` (CONTRACT §11): server-rendered pages and plain HTML
 * forms, no script. A session cookie names a row of `sessions`; every POST carries the session's
 * CSRF token (the sign-in form a token of its own, double-submitted in a cookie). Errors are HTML
 * pages, never the API's JSON. This file is the table: each page group's routes live in `routes/`.
 */
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { isUnavailableError } from '../db/errors.ts';
import { AppError } from '../errors.ts';
import { MerchantNotFoundError } from '../merchants/merchants.service.ts';
import { developerRoutes } from './routes/access.routes.ts';
import { dashboardContext, failure, SECURITY_HEADERS, type DashboardOptions } from './routes/http.ts';
import { merchantRoutes } from './routes/merchants.routes.ts';
import { operationsRoutes } from './routes/operations.routes.ts';
import { exceptionRoutes } from './routes/exceptions.routes.ts';
import { overviewRoutes } from './routes/overview.routes.ts';
import { reconcileRoutes } from './routes/reconcile.routes.ts';
import { operatorOnly, signedIn, signInRoutes, signOutRoutes } from './routes/session.routes.ts';
import { transactionActionRoutes } from './routes/transaction-actions.routes.ts';
import { transactionRoutes } from './routes/transactions.routes.ts';
import { accountRoutes, userRoutes } from './routes/users.routes.ts';
import { AccountError } from './accounts.service.ts';

export type { DashboardOptions } from './routes/http.ts';

export function isDashboardPath(url: string): boolean {
  return url === '/dashboard' || url.startsWith('/dashboard/') || url.startsWith('/dashboard?');
}

/** A request the router could not take (a bad `%` escape): the 400 page. */
export function dashboardFrameworkError(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.headers(SECURITY_HEADERS).header('x-request-id', request.id);
  return failure(reply, 400);
}

/** Longer than any field of a console form or filter: refused rather than compared. */
const MAX_VALUE = 2048;

/**
 * Why a request's query, path or form holds text that cannot be stored or compared, or null. A NUL
 * is refused by PostgreSQL's text (SQLite takes it) and an over-long value is no id, name or amount:
 * each is a 400 on both databases rather than a 500 on one. (Bytes that are not UTF-8 are decoded
 * as U+FFFD before this, which both store.)
 */
function unstorableInput(req: FastifyRequest): string | null {
  const values: unknown[] = [
    ...Object.values((req.query ?? {}) as Record<string, unknown>),
    ...Object.values((req.params ?? {}) as Record<string, unknown>),
    ...(req.body instanceof URLSearchParams ? [...req.body.keys(), ...req.body.values()] : []),
  ];
  for (const v of values.flat()) {
    if (typeof v !== 'string') continue;
    if (v.includes('\u0000')) return 'The request holds a NUL character, which no field takes.';
    if (v.length > MAX_VALUE) return `A field is longer than ${MAX_VALUE} characters.`;
  }
  return null;
}

export const dashboardRoutes: FastifyPluginAsync<DashboardOptions> = async (app, opts) => {
  const ctx = dashboardContext(opts);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 8 * 1024 },
    (_req, body, done) => done(null, new URLSearchParams(body as string)),
  );
  app.decorateRequest('dashboardUser', null);
  app.addHook('onRequest', async (_req, reply) => {
    reply.headers(SECURITY_HEADERS);
  });
  // Before any page reads them: text the databases cannot store or compare is refused here, once.
  app.addHook('preValidation', async (req, reply) => {
    const problem = unstorableInput(req);
    if (problem) return failure(reply, 400, problem, false);
  });

  app.setNotFoundHandler((req, reply) =>
    failure(reply.headers(SECURITY_HEADERS), 404, undefined, req.dashboardUser !== null),
  );
  app.setErrorHandler((error: FastifyError | Error, req, reply) => {
    const signedIn = req.dashboardUser !== null;
    if (error instanceof AppError) {
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      if (error.statusCode >= 500) req.log.error({ err: error }, 'dashboard error');
      return failure(reply, error.statusCode, error.statusCode < 500 ? error.message : undefined, signedIn);
    }
    if (error instanceof AccountError) return failure(reply, error.statusCode, error.message, signedIn);
    if (error instanceof MerchantNotFoundError)
      return failure(reply, 404, 'There is no such merchant.', signedIn);
    if (isUnavailableError(error)) {
      req.log.warn({ err: error }, 'storage unavailable');
      return failure(reply.header('retry-after', '5'), 503, undefined, signedIn);
    }
    const status = (error as FastifyError).statusCode;
    if (status && status >= 400 && status < 500)
      return failure(reply, status === 413 || status === 415 ? status : 400, undefined, signedIn);
    req.log.error({ err: error }, 'unhandled dashboard error');
    return failure(reply, 500, undefined, signedIn);
  });

  signInRoutes(app, ctx);

  app.register(async (app) => {
    app.addHook('preHandler', signedIn(ctx));
    signOutRoutes(app, ctx);
    overviewRoutes(app, ctx);
    transactionRoutes(app, ctx);
    transactionActionRoutes(app, ctx);
    developerRoutes(app, ctx);
    accountRoutes(app, ctx);
    // Both roles: an operator's in full, a merchant's user's read-only and about its own merchant.
    exceptionRoutes(app, ctx);
    reconcileRoutes(app, ctx);

    app.register(async (ops) => {
      ops.addHook('preHandler', operatorOnly);
      merchantRoutes(ops, ctx);
      operationsRoutes(ops, ctx);
      userRoutes(ops, ctx);
    });
  });
};
