/** Signing in and out, and the stylesheet the sign-in page already needs. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import { secretBase62 } from '../../ids.ts';
import { AccountError, sameText } from '../accounts.service.ts';
import { DASHBOARD_CSS } from '../dashboard.styles.ts';
import { signInPage } from '../views/layout.ts';
import { cookies, failure, field, form, html, type DashboardContext } from './http.ts';

/** The pages anyone may open: the stylesheet and the sign-in form. */
export function signInRoutes(app: FastifyInstance, { accounts, cookies: names }: DashboardContext): void {
  const { session: SESSION_COOKIE, signIn: SIGN_IN_COOKIE, flags: cookieFlags } = names;

  app.get('/app.css', { schema: { hide: true } }, async (_req, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(DASHBOARD_CSS),
  );

  app.get('/sign-in', { schema: { hide: true } }, async (req, reply) => {
    const token = secretBase62(32);
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
      if (err instanceof AccountError)
        return html(reply, err.statusCode, signInPage(expected, err.message, email));
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
}

/** The hook before every page past the sign-in: a live session, and on a POST its CSRF token. */
export function signedIn({ accounts, cookies: names }: DashboardContext) {
  const { session: SESSION_COOKIE, flags: cookieFlags } = names;
  return async (req: FastifyRequest, reply: FastifyReply) => {
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
}

/** The hook before the operators' pages: anyone else finds nothing there. */
export async function operatorOnly(req: FastifyRequest, reply: FastifyReply) {
  if (req.dashboardUser?.role !== 'operator') return failure(reply, 404, undefined, true);
}

/** Signing out (past the signed-in hook: it needs the session and its CSRF token). */
export function signOutRoutes(
  app: FastifyInstance,
  { accounts, cookies: names, user }: DashboardContext,
): void {
  app.post('/sign-out', { schema: { hide: true } }, async (req, reply) => {
    await accounts.signOut(user(req));
    return reply
      .code(303)
      .header('set-cookie', `${names.session}=; ${names.flags}; Max-Age=0`)
      .header('location', '/dashboard/sign-in')
      .send();
  });
}
