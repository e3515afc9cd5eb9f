/**
 * A browser of the console over `inject()`: signs in through the sign-in form (its token in the
 * field and the cookie), then gets pages and posts forms with the session's cookie and CSRF token.
 */
import assert from 'node:assert/strict';
import type { Gateway } from './harness.ts';

export interface ConsoleBrowser {
  cookie: string;
  csrf: string;
}

export function setCookies(headers: Record<string, unknown>): string[] {
  const raw = headers['set-cookie'];
  return raw === undefined ? [] : Array.isArray(raw) ? raw : [String(raw)];
}

export function csrfOf(html: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(html);
  assert.ok(m, 'the page has a form with a CSRF token');
  return m[1]!;
}

/** Sends the sign-in form as a browser would; the answer is the sign-in's own (303 when it worked). */
export async function postSignIn(gw: Gateway, email: string, password: string, address = '10.0.0.1') {
  const page = await gw.app.inject({ method: 'GET', url: '/dashboard/sign-in', remoteAddress: address });
  const token = csrfOf(page.body);
  return gw.app.inject({
    method: 'POST',
    url: '/dashboard/sign-in',
    remoteAddress: address,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `paygate_signin=${token}` },
    payload: new URLSearchParams({ email, password, csrf: token }).toString(),
  });
}

/** A signed-in browser, or an assertion failure naming what the sign-in answered. */
export async function signedIn(gw: Gateway, email: string, password: string): Promise<ConsoleBrowser> {
  const res = await postSignIn(gw, email, password);
  assert.equal(res.statusCode, 303, `${email}: ${res.statusCode} ${res.body.slice(0, 500)}`);
  const cookie = setCookies(res.headers)
    .find((c) => c.startsWith('paygate_session='))!
    .split(';')[0]!;
  const home = await gw.app.inject({ method: 'GET', url: '/dashboard', headers: { cookie } });
  return { cookie, csrf: csrfOf(home.body) };
}

export function getPage(gw: Gateway, b: ConsoleBrowser, url: string) {
  return gw.app.inject({ method: 'GET', url, headers: { cookie: b.cookie } });
}

/** Posts a form with the browser's CSRF token (raw `payload` when given, for bytes URLSearchParams would not make). */
export function postForm(
  gw: Gateway,
  b: ConsoleBrowser,
  url: string,
  fields: Record<string, string>,
  payload?: string,
) {
  return gw.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: b.cookie },
    payload: payload ?? new URLSearchParams({ ...fields, csrf: b.csrf }).toString(),
  });
}
