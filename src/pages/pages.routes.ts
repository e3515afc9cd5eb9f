/**
 * HTTP for the hosted payment pages: `GET /{pay,p2p,cashier}/{payment_id}` and the sandbox buttons'
 * `POST …/{payment_id}/simulate`. Registered outside the API plugin: customers' browsers carry no
 * API key, post HTML forms rather than JSON, and get HTML pages (never shape A) for errors too.
 */
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { isUnavailableError } from '../db/errors.ts';
import { AppError } from '../errors.ts';
import { PagesService, type PageKind } from './pages.service.ts';
import { PAGE_JS_HASH } from './pages.script.ts';
import { PAGE_CSS_HASH } from './pages.styles.ts';
import { renderErrorPage, renderPage } from './pages.views.ts';

const KINDS: readonly PageKind[] = ['pay', 'p2p', 'cashier'];
const OUTCOMES = new Set(['SUCCESS', 'FAILED']);

/**
 * The one script and the one stylesheet by hash (the script may ask its page's status, `connect-src
 * 'self'`), the QR inline. `form-action` also names the P2P
 * return origin because Chromium checks the redirect that follows a form post against it.
 */
export function contentSecurityPolicy(returnOrigin: string | null = null): string {
  return [
    "default-src 'none'",
    `style-src ${PAGE_CSS_HASH}`,
    `script-src ${PAGE_JS_HASH}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    `form-action 'self'${returnOrigin ? ` ${returnOrigin}` : ''}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

const SECURITY_HEADERS = {
  'content-security-policy': contentSecurityPolicy(),
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // same-origin: the pages' own form posts carry their real Origin (under no-referrer a browser
  // without Sec-Fetch-Site sends `Origin: null`); other sites get no referrer, so no payment id.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

function sendHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(html);
}

const ERROR_PAGES: Record<number, [string, string]> = {
  400: [
    'Something is wrong with this request',
    'The request could not be understood. Go back to the payment page and try again.',
  ],
  403: ['Not allowed', 'This action is not available for this payment.'],
  404: [
    'Payment not found',
    'This payment link is not valid. Check the link, or ask the merchant for a new one.',
  ],
  503: ['Temporarily unavailable', 'Payments cannot be shown right now. Please try again in a minute.'],
  500: ['Something went wrong', 'Please try again in a minute.'],
};

/** Whether a URL is one of the hosted pages' (which answer HTML, never shape A). */
export function isPagePath(url: string): boolean {
  return /^\/(pay|p2p|cashier)\//.test(url);
}

/** A page URL the router could not take (a bad `%` escape, an over-long id): the 400 page. */
export function pageFrameworkError(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.headers(SECURITY_HEADERS).header('x-request-id', request.id);
  return errorPage(reply, 400);
}

function errorPage(reply: FastifyReply, status: number): FastifyReply {
  const [title, message] = ERROR_PAGES[status] ?? ERROR_PAGES[status < 500 ? 400 : 500]!;
  return sendHtml(reply, status, renderErrorPage(title, message));
}

function pageErrorHandler(
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  // An error after a route set its redirect must not send that redirect with an error page.
  reply.removeHeader('location');
  if (error instanceof AppError) {
    for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
    if (error.statusCode >= 500) request.log.error({ err: error }, 'page error');
    return errorPage(reply, error.statusCode);
  }
  if (isUnavailableError(error)) {
    request.log.warn({ err: error }, 'storage unavailable');
    return errorPage(reply.header('retry-after', '5'), 503);
  }
  const status = (error as FastifyError).statusCode;
  // Too large, wrong content type, malformed form: the browser sent something no page sends.
  if (status && status >= 400 && status < 500)
    return errorPage(reply, status === 413 || status === 415 ? status : 400);
  request.log.error({ err: error }, 'unhandled page error');
  return errorPage(reply, 500);
}

interface IdParams {
  id: string;
}

/**
 * Whether a sandbox button's post may have come from another site (docs/decisions.md, "Hosted
 * pages"). A browser that sends `Sec-Fetch-Site` is believed; one that does not is judged by its
 * `Origin`, which must be PUBLIC_URL's (a `null` origin is refused: it hides where the form was).
 * With neither header it is not a browser's form post (curl, a test), and nothing is forged.
 * The pages send `Referrer-Policy: same-origin`, so their own posts carry their real `Origin`.
 */
export function isCrossSitePost(req: FastifyRequest, publicOrigin: string): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) return site !== 'same-origin';
  const origin = req.headers.origin;
  return origin !== undefined && origin !== publicOrigin;
}

export const pageRoutes: FastifyPluginAsync<{ pages: PagesService }> = async (app, { pages }) => {
  // Only the sandbox buttons post, and they send one short urlencoded field.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 1024 },
    (_req, body, done) => {
      done(null, new URLSearchParams(body as string));
    },
  );
  app.addHook('onRequest', async (req, reply) => {
    reply.headers(SECURITY_HEADERS);
    // A form on another site must not settle a customer's payment (sandbox or not): refused before
    // its body is read, so whatever it sends it gets the 403.
    if (req.method === 'POST' && isCrossSitePost(req, pages.publicOrigin)) return errorPage(reply, 403);
  });
  app.setErrorHandler(pageErrorHandler);

  for (const kind of KINDS) {
    app.get<{ Params: IdParams }>(`/${kind}/:id`, { schema: { hide: true } }, async (req, reply) => {
      const row = await pages.find(kind, req.params.id);
      reply.header(
        'content-security-policy',
        contentSecurityPolicy(PagesService.redirectOrigin(row.txn.redirect_url)),
      );
      const outcome = await pages.view(row, kind);
      if ('redirect' in outcome) return reply.code(303).header('location', outcome.redirect).send();
      return sendHtml(reply, 200, renderPage(outcome.page, pages.pagePath(kind, row.txn.payment_id)));
    });

    // What the page's script asks (docs/integration.md §2): this payment only, no key.
    app.get<{ Params: IdParams }>(`/${kind}/:id/status`, { schema: { hide: true } }, async (req, reply) => {
      const row = await pages.find(kind, req.params.id);
      return reply.type('application/json; charset=utf-8').send(pages.status(row));
    });

    app.post<{ Params: IdParams }>(
      `/${kind}/:id/simulate`,
      { schema: { hide: true } },
      async (req, reply) => {
        const statuses = req.body instanceof URLSearchParams ? req.body.getAll('status') : [];
        const status = statuses.length === 1 ? statuses[0] : undefined;
        if (status === undefined || !OUTCOMES.has(status)) return errorPage(reply, 400);
        const row = await pages.find(kind, req.params.id);
        const location = await pages.simulate(row, kind, status as 'SUCCESS' | 'FAILED');
        return reply.code(303).header('location', location).send();
      },
    );
  }
};
