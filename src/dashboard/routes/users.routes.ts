/** Every user's account page (their own password) and the operator's users page (list, disable, enable). */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.ts';
import { AccountError } from '../accounts.service.ts';
import { page } from '../views/layout.ts';
import { accountBody, usersBody } from '../views/users.ts';
import { badQuery, field, form, html, redirect, type DashboardContext } from './http.ts';

/** The account page, open to every signed-in user. */
export function accountRoutes(app: FastifyInstance, { users, user, frame }: DashboardContext): void {
  app.get('/account', { schema: { hide: true } }, async (req, reply) =>
    html(reply, 200, page(frame(req, 'account', 'Your account'), accountBody(user(req), null))),
  );
  app.post('/account/password', { schema: { hide: true } }, async (req, reply) => {
    const body = form(req);
    const next = field(body, 'password');
    const again = (text: string, status = 400) =>
      html(reply, status, page(frame(req, 'account', 'Your account', null), accountBody(user(req), text)));
    if (next !== field(body, 'confirm')) return again('The two new passwords differ.');
    try {
      await users.changePassword(user(req), field(body, 'current'), next, req.ip);
    } catch (err) {
      if (err instanceof AccountError && (err.code === 'WRONG_PASSWORD' || err.code === 'INVALID_USER'))
        return again(err.message);
      if (err instanceof AppError && err.errorCode === 'RATE_LIMITED') {
        for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
        return again(err.message, 429);
      }
      throw err;
    }
    return redirect(reply, '/dashboard/account', 'password');
  });
}

/** The operator's users page. */
export function userRoutes(ops: FastifyInstance, { users, user, frame }: DashboardContext): void {
  ops.get('/users', { schema: { hide: true } }, async (req, reply) =>
    html(reply, 200, page(frame(req, 'users', 'Users'), usersBody(user(req), await users.list(null)))),
  );
  ops.post<{ Params: { id: string } }>(
    '/users/:id/status',
    { schema: { hide: true } },
    async (req, reply) => {
      const status = field(form(req), 'status');
      if (status !== 'active' && status !== 'disabled') throw badQuery('status must be active or disabled');
      const me = user(req);
      await users.setDisabled(
        { email: me.email, userId: me.userId },
        { id: req.params.id },
        status === 'disabled',
      );
      return redirect(reply, '/dashboard/users', status === 'active' ? 'user_enabled' : 'user_disabled');
    },
  );
}
