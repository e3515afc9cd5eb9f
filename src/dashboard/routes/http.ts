/**
 * What every page group of the console shares: its headers and cookies, the HTML answers and error
 * pages, reading forms and query strings, and the signed-in user's frame around a page.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import type { AccountService, DashboardUser } from '../accounts.service.ts';
import type { DashboardService } from '../dashboard.service.ts';
import type { UserService } from '../users.service.ts';
import { errorPage, type Frame } from '../views/layout.ts';

declare module 'fastify' {
  interface FastifyRequest {
    dashboardUser: DashboardUser | null;
  }
}

export interface DashboardOptions {
  accounts: AccountService;
  dashboard: DashboardService;
  users: UserService;
  /** Cookies get `Secure` when PUBLIC_URL is https. */
  secure: boolean;
  currencies: readonly string[];
}

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

export const SECURITY_HEADERS = {
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

/** What a finished action says on the page it returns to (a fixed list: no text from the URL). */
const DONE: Record<string, string> = {
  resent: 'The callback is queued and will be sent in a moment.',
  refunded: 'The refund is created and its amount held; it settles in a moment.',
  credited: 'The wallet is credited.',
  resolved: 'The exception is resolved, or its refund is on its way.',
  disabled: 'The merchant is disabled: its API key is refused from now on.',
  enabled: 'The merchant is enabled again.',
  callback: 'The default callback URL is saved.',
  password: 'Your password is changed; your other browsers are signed out.',
  user_disabled: 'The user is disabled and signed out everywhere.',
  user_enabled: 'The user may sign in again.',
};

export function html(reply: FastifyReply, status: number, text: string): FastifyReply {
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

export function failure(
  reply: FastifyReply,
  status: number,
  message?: string,
  signedIn = false,
): FastifyReply {
  const [title, text] = ERRORS[status] ?? ERRORS[status < 500 ? 400 : 500]!;
  return html(reply, status, errorPage(title, message ?? text, signedIn));
}

export function redirect(reply: FastifyReply, to: string, done?: string): FastifyReply {
  return reply
    .code(303)
    .header('location', done ? `${to}?done=${done}` : to)
    .send();
}

export function cookies(req: FastifyRequest): Map<string, string> {
  const jar = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) jar.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return jar;
}

export function form(req: FastifyRequest): URLSearchParams {
  return req.body instanceof URLSearchParams ? req.body : new URLSearchParams();
}

/** One value of a form field; a field sent twice is refused as malformed. */
export function field(params: URLSearchParams, name: string): string {
  const values = params.getAll(name);
  if (values.length > 1) throw new AppError('BAD_REQUEST', `${name} was sent twice`);
  return values[0] ?? '';
}

export function stringQuery(req: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>))
    if (typeof v === 'string') out[k] = v;
    else if (Array.isArray(v)) throw new AppError('BAD_REQUEST', `${k} was given twice`);
  return out;
}

export function badQuery(message: string): AppError {
  return new AppError('BAD_REQUEST', message);
}

/** What a page group is given: the services, the settings, and the request helpers bound to them. */
export interface DashboardContext {
  accounts: AccountService;
  dashboard: DashboardService;
  users: UserService;
  currencies: readonly string[];
  cookies: ReturnType<typeof cookieNames>;
  /** The signed-in user (set by the signed-in hook). */
  user(req: FastifyRequest): DashboardUser;
  /** The frame around a page: its user, its place in the menu, its title and a message. */
  frame(req: FastifyRequest, active: string, title: string, flash?: Frame['flash']): Frame;
}

export function dashboardContext(opts: DashboardOptions): DashboardContext {
  const user = (req: FastifyRequest) => req.dashboardUser!;
  const flash = (req: FastifyRequest): Frame['flash'] => {
    const done = stringQuery(req).done;
    // Own keys only: `?done=toString` names Object.prototype's, not a message.
    return done && Object.hasOwn(DONE, done) ? { text: DONE[done]! } : null;
  };
  return {
    accounts: opts.accounts,
    dashboard: opts.dashboard,
    users: opts.users,
    currencies: opts.currencies,
    cookies: cookieNames(opts.secure),
    user,
    frame: (req, active, title, f = flash(req)) => ({ user: user(req), active, title, flash: f }),
  };
}
