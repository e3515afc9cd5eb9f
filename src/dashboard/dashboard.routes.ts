/**
 * HTTP of the dashboard under `/dashboard` (CONTRACT §11): server-rendered pages and plain HTML
 * forms, no script. A session cookie names a row of `sessions`; every POST carries the session's
 * CSRF token (the sign-in form a token of its own, double-submitted in a cookie). Errors are HTML
 * pages, never the API's JSON.
 */
import { Readable } from 'node:stream';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { isUnavailableError } from '../db/errors.ts';
import type { Flow, MerchantStatus, TransactionKind, TransactionStatus } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { base62 } from '../ids.ts';
import { MerchantNotFoundError } from '../merchants/merchants.service.ts';
import { parseAmountText } from '../money.ts';
import { sameText, type AccountService, type DashboardUser } from './accounts.service.ts';
import { CSV_HEADER, csvLine, csvRow } from './csv.ts';
import { DAY_MS, type ListCursor, type TransactionFilter } from './dashboard.repository.ts';
import { istDayStart, type DashboardService } from './dashboard.service.ts';
import { DASHBOARD_CSS } from './dashboard.styles.ts';
import { errorPage, esc, page, signInPage, type Frame } from './views/layout.ts';
import {
  activityTable,
  accessActions,
  exceptionsBody,
  ledgerBody,
  merchantBody,
  merchantFacts,
  merchantPicker,
  merchantsBody,
  secretShown,
  verifyBody,
} from './views/manage.ts';
import { overviewBody } from './views/overview.ts';
import { detailBody, listBody, QUERY_KEYS, type ListQuery } from './views/transactions.ts';

/**
 * The cookies' names. Under https they carry the `__Host-` prefix: the browser then takes them only
 * from this host, over https, for the whole path, so a page on a sibling subdomain cannot plant a
 * session of its own choosing.
 */
function cookieNames(secure: boolean) {
  const prefix = secure ? '__Host-' : '';
  return {
    session: `${prefix}paygate_session`,
    signIn: `${prefix}paygate_signin`,
    flags: `Path=${secure ? '/' : '/dashboard'}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`,
  };
}

const SECURITY_HEADERS = {
  'content-security-policy': [
    "default-src 'none'",
    "style-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

const KINDS = new Set<string>(['payin', 'payout']);
const FLOWS = new Set<string>(['onsite', 'offsite', 'p2p', 'payout']);
const STATUSES = new Set<string>(['PENDING', 'PROCESSING', 'SUCCESS', 'FAILED']);
const CURSOR = /^(\d{1,15})\.([A-Za-z0-9]{1,64})$/;
/** A money form's one-time id (the credit form's hidden `form_id`). */
const FORM_ID = /^[A-Za-z0-9]{22}$/;

/** What a finished action says on the page it returns to (a fixed list: no text from the URL). */
const DONE: Record<string, string> = {
  resent: 'The callback is queued and will be sent in a moment.',
  credited: 'The wallet is credited.',
  disabled: 'The merchant is disabled: its API key is refused from now on.',
  enabled: 'The merchant is enabled again.',
  callback: 'The default callback URL is saved.',
};

declare module 'fastify' {
  interface FastifyRequest {
    dashboardUser: DashboardUser | null;
  }
}

export function isDashboardPath(url: string): boolean {
  return url === '/dashboard' || url.startsWith('/dashboard/') || url.startsWith('/dashboard?');
}

function html(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(text);
}

const ERRORS: Record<number, [string, string]> = {
  400: ['Something is wrong with this request', 'Check what you entered and try again.'],
  403: ['Not allowed', 'This request was refused. Reload the page and try again.'],
  404: ['Not found', 'There is nothing here, or it is not yours to see.'],
  413: ['Too large', 'The form sent more than a dashboard form holds.'],
  415: ['Not a form', 'The dashboard takes HTML form posts only.'],
  429: ['Too many attempts', 'Wait a little and try again.'],
  503: ['Temporarily unavailable', 'The dashboard cannot answer right now. Try again in a minute.'],
  500: ['Something went wrong', 'Try again in a minute.'],
};

function failure(reply: FastifyReply, status: number, message?: string, signedIn = false): FastifyReply {
  const [title, text] = ERRORS[status] ?? ERRORS[status < 500 ? 400 : 500]!;
  return html(reply, status, errorPage(title, message ?? text, signedIn));
}

/** A request the router could not take (a bad `%` escape): the 400 page. */
export function dashboardFrameworkError(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.headers(SECURITY_HEADERS).header('x-request-id', request.id);
  return failure(reply, 400);
}

function cookies(req: FastifyRequest): Map<string, string> {
  const jar = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) jar.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return jar;
}

function form(req: FastifyRequest): URLSearchParams {
  return req.body instanceof URLSearchParams ? req.body : new URLSearchParams();
}

/** One value of a form field; a field sent twice is refused as malformed. */
function field(params: URLSearchParams, name: string): string {
  const values = params.getAll(name);
  if (values.length > 1) throw new AppError('BAD_REQUEST', `${name} was sent twice`);
  return values[0] ?? '';
}

function stringQuery(req: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>))
    if (typeof v === 'string') out[k] = v;
    else if (Array.isArray(v)) throw new AppError('BAD_REQUEST', `${k} was given twice`);
  return out;
}

function badQuery(message: string): AppError {
  return new AppError('BAD_REQUEST', message);
}

export interface DashboardOptions {
  accounts: AccountService;
  dashboard: DashboardService;
  /** Cookies get `Secure` when PUBLIC_URL is https. */
  secure: boolean;
  currencies: readonly string[];
}

export const dashboardRoutes: FastifyPluginAsync<DashboardOptions> = async (app, opts) => {
  const { accounts, dashboard } = opts;
  const { session: SESSION_COOKIE, signIn: SIGN_IN_COOKIE, flags: cookieFlags } = cookieNames(opts.secure);

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

  /** Pages and actions past the sign-in: a live session, and on a POST its CSRF token. */
  const signedIn = async (req: FastifyRequest, reply: FastifyReply) => {
    const token = cookies(req).get(SESSION_COOKIE);
    const user = token ? await accounts.session(token) : null;
    if (!user) {
      if (token) reply.header('set-cookie', `${SESSION_COOKIE}=; ${cookieFlags}; Max-Age=0`);
      return reply.code(303).header('location', '/dashboard/sign-in').send();
    }
    req.dashboardUser = user;
    if (req.method === 'POST' && !sameText(field(form(req), 'csrf'), user.csrfToken))
      return failure(
        reply,
        403,
        'The form was missing its security token. Reload the page and try again.',
        true,
      );
  };
  const operatorOnly = async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.dashboardUser?.role !== 'operator') return failure(reply, 404, undefined, true);
  };
  const user = (req: FastifyRequest) => req.dashboardUser!;
  const flash = (req: FastifyRequest): Frame['flash'] => {
    const done = stringQuery(req).done;
    return done && DONE[done] ? { text: DONE[done] } : null;
  };
  const frame = (
    req: FastifyRequest,
    active: string,
    title: string,
    f: Frame['flash'] = flash(req),
  ): Frame => ({
    user: user(req),
    active,
    title,
    flash: f,
  });

  app.get('/app.css', { schema: { hide: true } }, async (_req, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(DASHBOARD_CSS),
  );

  app.get('/sign-in', { schema: { hide: true } }, async (req, reply) => {
    const token = base62(32);
    reply.header('set-cookie', `${SIGN_IN_COOKIE}=${token}; ${cookieFlags}; Max-Age=3600`);
    return html(reply, 200, signInPage(token, null));
  });

  app.post('/sign-in', { schema: { hide: true } }, async (req, reply) => {
    const body = form(req);
    const expected = cookies(req).get(SIGN_IN_COOKIE) ?? '';
    if (!expected || !sameText(field(body, 'csrf'), expected))
      return failure(reply, 403, 'The sign-in form was missing its security token. Reload it and try again.');
    const email = field(body, 'email');
    let token: string | null;
    try {
      token = await accounts.signIn(email, field(body, 'password'), req.ip);
    } catch (err) {
      if (err instanceof AppError && err.errorCode === 'RATE_LIMITED') {
        for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
        return html(reply, 429, signInPage(expected, err.message, email));
      }
      throw err;
    }
    if (!token) return html(reply, 401, signInPage(expected, 'The email or password is wrong.', email));
    const earlier = cookies(req).get(SESSION_COOKIE);
    if (earlier) await accounts.endSession(earlier);
    return reply
      .code(303)
      .header('set-cookie', [
        `${SESSION_COOKIE}=${token}; ${cookieFlags}`,
        `${SIGN_IN_COOKIE}=; ${cookieFlags}; Max-Age=0`,
      ])
      .header('location', '/dashboard')
      .send();
  });

  app.register(async (app) => {
    app.addHook('preHandler', signedIn);

    app.post('/sign-out', { schema: { hide: true } }, async (req, reply) => {
      await accounts.signOut(user(req));
      return reply
        .code(303)
        .header('set-cookie', `${SESSION_COOKIE}=; ${cookieFlags}; Max-Age=0`)
        .header('location', '/dashboard/sign-in')
        .send();
    });

    app.get('/', { schema: { hide: true } }, async (req, reply) => {
      const u = user(req);
      const q = stringQuery(req);
      const merchantId = await dashboard.scope(u, q.merchant);
      const currency =
        q.currency && opts.currencies.includes(q.currency) ? q.currency : (opts.currencies[0] ?? 'INR');
      const { wallets, days } = await dashboard.overview(merchantId, currency);
      // The volume is of one currency; with more than one supported, the page offers the choice.
      const currencyPicker =
        opts.currencies.length > 1
          ? `<label for="pick-currency">Currency<select id="pick-currency" name="currency">${opts.currencies.map((c) => `<option${c === currency ? ' selected' : ''}>${esc(c)}</option>`).join('')}</select></label>`
          : '';
      const picker =
        u.role === 'operator'
          ? merchantPicker(
              '/dashboard',
              await dashboard.merchants(),
              merchantId,
              'All merchants',
              currencyPicker,
            )
          : currencyPicker
            ? `<form class="card inline" method="get" action="/dashboard">${currencyPicker}<button class="btn secondary" type="submit">Show</button></form>`
            : '';
      return html(
        reply,
        200,
        page(frame(req, 'overview', 'Overview'), overviewBody(wallets, days, picker, currency)),
      );
    });

    app.get('/transactions', { schema: { hide: true } }, async (req, reply) => {
      const { query, filter, cursor } = await listRequest(req);
      const rows = await dashboard.transactions(filter, cursor);
      const last = rows.length === 50 ? rows[rows.length - 1]! : null;
      const next = last ? `${last.created_at}.${last.payment_id}` : null;
      return html(
        reply,
        200,
        page(
          frame(req, 'transactions', 'Transactions'),
          listBody(user(req), query, rows, next, cursor === null),
        ),
      );
    });

    app.get('/transactions.csv', { schema: { hide: true } }, async (req, reply) => {
      const { filter } = await listRequest(req);
      const batches = dashboard.exportRows(filter);
      async function* lines() {
        yield csvLine(CSV_HEADER);
        for await (const rows of batches) yield rows.map(csvRow).join('');
      }
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="transactions.csv"')
        .send(Readable.from(lines()));
    });

    app.get<{ Params: { id: string } }>(
      '/transactions/:id',
      { schema: { hide: true } },
      async (req, reply) => {
        const detail = await dashboard.transaction(user(req), req.params.id);
        return html(
          reply,
          200,
          page(frame(req, 'transactions', 'Transaction'), detailBody(user(req), detail)),
        );
      },
    );

    app.post<{ Params: { id: string } }>(
      '/transactions/:id/resend',
      { schema: { hide: true } },
      async (req, reply) => {
        try {
          await dashboard.resend(user(req), req.params.id);
        } catch (err) {
          if (!(err instanceof AppError) || err.statusCode === 404 || err.statusCode >= 500) throw err;
          for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
          const detail = await dashboard.transaction(user(req), req.params.id);
          return html(
            reply,
            err.statusCode,
            page(
              frame(req, 'transactions', 'Transaction', { text: err.message, error: true }),
              detailBody(user(req), detail),
            ),
          );
        }
        return redirect(reply, `/dashboard/transactions/${req.params.id}`, 'resent');
      },
    );

    app.get('/ledger', { schema: { hide: true } }, async (req, reply) => {
      const u = user(req);
      const q = stringQuery(req);
      const merchantId = await dashboard.scope(u, q.merchant);
      const account = q.account === 'held' ? 'held' : 'available';
      const currency = q.currency && opts.currencies.includes(q.currency) ? q.currency : 'INR';
      const accountPicker = `<label for="pick-account">Account<select id="pick-account" name="account"><option value="available"${account === 'available' ? ' selected' : ''}>Available</option><option value="held"${account === 'held' ? ' selected' : ''}>Held</option></select></label><label for="pick-currency">Currency<select id="pick-currency" name="currency">${opts.currencies.map((c) => `<option${c === currency ? ' selected' : ''}>${c}</option>`).join('')}</select></label>`;
      const picker =
        u.role === 'operator'
          ? merchantPicker(
              '/dashboard/ledger',
              await dashboard.merchants(),
              merchantId,
              merchantId ? null : 'Choose a merchant',
              accountPicker,
            )
          : `<form class="card inline" method="get" action="/dashboard/ledger">${accountPicker}<button class="btn secondary" type="submit">Show</button></form>`;
      if (merchantId === null)
        return html(
          reply,
          200,
          page(
            frame(req, 'ledger', 'Ledger'),
            `${picker}<p class="card muted">Choose a merchant to see its ledger.</p>`,
          ),
        );
      const before = q.before === undefined ? null : Number(q.before);
      if (before !== null && !(Number.isSafeInteger(before) && before > 0))
        throw badQuery('before must be an entry id');
      const rows = await dashboard.ledger(merchantId, currency, account, before);
      const next = rows.length === 50 ? String(rows[rows.length - 1]!.id) : null;
      const base = `/dashboard/ledger?${new URLSearchParams({ ...(u.role === 'operator' ? { merchant: merchantId } : {}), account, currency }).toString()}`;
      return html(
        reply,
        200,
        page(frame(req, 'ledger', 'Ledger'), ledgerBody(rows, account, currency, next, base, picker)),
      );
    });

    // The developers' page is a merchant user's; an operator finds the same actions on a merchant's page.
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
          `${merchantFacts(m)}${accessActions(u, m, '/dashboard/developers')}<section aria-labelledby="act-h"><h2 id="act-h">Activity</h2>${activityTable(activity, false)}</section>`,
        ),
      );
    });
    registerAccessActions('/developers', (req) => user(req).merchantId, 'developers');

    app.register(async (ops) => {
      ops.addHook('preHandler', operatorOnly);

      ops.get('/merchants', { schema: { hide: true } }, async (req, reply) =>
        html(
          reply,
          200,
          page(frame(req, 'merchants', 'Merchants'), merchantsBody(user(req), await dashboard.merchants())),
        ),
      );

      ops.post('/merchants', { schema: { hide: true } }, async (req, reply) => {
        const body = form(req);
        const name = field(body, 'name').trim();
        if (name.length < 1 || name.length > 100) throw badQuery('The name must be 1 to 100 characters.');
        const callbackUrl = field(body, 'callback_url').trim() || null;
        const vpa = field(body, 'vpa').trim() || null;
        const live = field(body, 'mode') === 'live';
        const created = await dashboard.createMerchant(user(req), { name, callbackUrl, vpa, live });
        return html(
          reply,
          201,
          page(
            frame(req, 'merchants', `Merchant ${created.name} created`, null),
            `${secretShown('api-key', 'API key', created.api_key, `/dashboard/merchants/${created.merchant_id}`)}${secretShown('webhook-secret', 'Webhook secret', created.webhook_secret, `/dashboard/merchants/${created.merchant_id}`)}`,
          ),
        );
      });

      ops.get<{ Params: { id: string } }>(
        '/merchants/:id',
        { schema: { hide: true } },
        async (req, reply) => {
          const m = await dashboard.merchant(req.params.id);
          const [{ wallets }, activity] = await Promise.all([
            dashboard.overview(m.id),
            dashboard.activity(m.id),
          ]);
          return html(
            reply,
            200,
            page(
              frame(req, 'merchants', m.name),
              merchantBody(user(req), m, wallets, opts.currencies, activity),
            ),
          );
        },
      );

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
          if (status !== 'active' && status !== 'disabled')
            throw badQuery('status must be active or disabled');
          await dashboard.setStatus(user(req), req.params.id, status as MerchantStatus);
          return redirect(
            reply,
            `/dashboard/merchants/${req.params.id}`,
            status === 'active' ? 'enabled' : 'disabled',
          );
        },
      );
      registerAccessActions('/merchants/:id', (req) => (req.params as { id: string }).id, 'merchants', ops);

      ops.get('/exceptions', { schema: { hide: true } }, async (req, reply) =>
        html(
          reply,
          200,
          page(frame(req, 'exceptions', 'Channel exceptions'), exceptionsBody(await dashboard.exceptions())),
        ),
      );
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
    });

    /** Key and secret rotation and the callback URL, for a merchant's user and an operator alike. */
    function registerAccessActions(
      path: string,
      merchantOf: (req: FastifyRequest) => string | null,
      active: string,
      scope = app,
    ) {
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
          page(
            frame(req, active, 'New API key', null),
            secretShown('api-key', 'API key', r.api_key, back(req)),
          ),
        );
      });
      scope.post(`${path}/rotate-secret`, { schema: { hide: true } }, async (req, reply) => {
        const r = await dashboard.rotateSecret(user(req), target(req));
        return html(
          reply,
          200,
          page(
            frame(req, active, 'New webhook secret', null),
            secretShown('webhook-secret', 'Webhook secret', r.webhook_secret, back(req)),
          ),
        );
      });
      scope.post(`${path}/callback-url`, { schema: { hide: true } }, async (req, reply) => {
        const url = field(form(req), 'callback_url').trim();
        await dashboard.setCallbackUrl(user(req), target(req), url === '' ? null : url);
        return redirect(reply, back(req), 'callback');
      });
    }

    /** The list's filter from its query string; 400 for a value no form sends. */
    async function listRequest(
      req: FastifyRequest,
    ): Promise<{ query: ListQuery; filter: TransactionFilter; cursor: ListCursor | null }> {
      const q = stringQuery(req);
      const query: ListQuery = {};
      for (const key of QUERY_KEYS) if (q[key]) query[key] = q[key].trim();
      const filter: TransactionFilter = { merchantId: await dashboard.scope(user(req), query.merchant) };
      if (user(req).role !== 'operator') delete query.merchant;
      if (query.kind) {
        if (!KINDS.has(query.kind)) throw badQuery('kind must be payin or payout');
        filter.kind = query.kind as TransactionKind;
      }
      if (query.flow) {
        if (!FLOWS.has(query.flow)) throw badQuery('flow must be onsite, offsite, p2p or payout');
        filter.flow = query.flow as Flow;
      }
      if (query.status) {
        if (!STATUSES.has(query.status))
          throw badQuery('status must be PENDING, PROCESSING, SUCCESS or FAILED');
        filter.status = query.status as TransactionStatus;
      }
      for (const key of ['from', 'to'] as const) {
        if (!query[key]) continue;
        const start = istDayStart(query[key]);
        if (start === null) throw badQuery(`${key} must be a date, YYYY-MM-DD`);
        if (key === 'from') filter.from = start;
        else filter.to = start + DAY_MS;
      }
      for (const key of ['min', 'max'] as const) {
        if (!query[key]) continue;
        const paise = parseAmountText(query[key]);
        if (paise === null) throw badQuery(`${key} must be an amount in rupees, such as 500.00`);
        if (key === 'min') filter.minAmount = paise;
        else filter.maxAmount = paise;
      }
      if (query.q !== undefined) {
        if (query.q.length > 128) throw badQuery('the search is at most 128 characters');
        filter.search = query.q;
      }
      let cursor: ListCursor | null = null;
      if (q.after !== undefined) {
        const m = CURSOR.exec(q.after);
        if (!m) throw badQuery('after is not a page of this list');
        cursor = { createdAt: Number(m[1]), paymentId: m[2]! };
      }
      return { query, filter, cursor };
    }
  });
};

function redirect(reply: FastifyReply, to: string, done?: string): FastifyReply {
  return reply
    .code(303)
    .header('location', done ? `${to}?done=${done}` : to)
    .send();
}
