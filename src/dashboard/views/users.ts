/** The operator's users page and every user's own account page (changing the password). */
import type { DashboardUser } from '../accounts.service.ts';
import { PASSWORD_MAX, PASSWORD_MIN } from '../accounts.service.ts';
import type { UserView } from '../users.service.ts';
import { csrfField, esc, postButton, scrollTable, statusBadge } from './layout.ts';

export function usersBody(me: DashboardUser, users: UserView[]): string {
  const rows = users.map((u) => {
    const action =
      u.user_id === me.userId
        ? '<span class="muted">you</span>'
        : u.status === 'active'
          ? postButton(
              me,
              `/dashboard/users/${u.user_id}/status`,
              `Disable ${u.email}`,
              'danger',
              '<input type="hidden" name="status" value="disabled">',
            )
          : postButton(
              me,
              `/dashboard/users/${u.user_id}/status`,
              `Enable ${u.email}`,
              'secondary',
              '<input type="hidden" name="status" value="active">',
            );
    return `<tr><td>${esc(u.email)}</td><td>${statusBadge(u.status)}</td><td>${u.role}</td><td>${u.merchant_id ? `<a class="mono" href="/dashboard/merchants/${esc(u.merchant_id)}">${esc(u.merchant_id)}</a>` : ''}</td><td>${action}</td></tr>`;
  });
  return `<p class="muted">A disabled user cannot sign in, and their open sessions end at once. Passwords are reset with <code>paygate user reset-password --email EMAIL</code>.</p>
${scrollTable('Users', ['Email', 'Status', 'Role', 'Merchant', 'Action'], rows, 'No users yet.')}`;
}

/** The account page; `problem` is why the last change was refused. */
export function accountBody(me: DashboardUser, problem: string | null): string {
  const flash = problem ? `<p class="flash error" role="alert">${esc(problem)}</p>` : '';
  return `<section class="card" aria-labelledby="pw-h"><h2 id="pw-h">Change your password</h2>
${flash}<p class="muted">${PASSWORD_MIN} to ${PASSWORD_MAX} characters. Your other signed-in browsers are signed out.</p>
<form method="post" action="/dashboard/account/password">${csrfField(me)}
<input type="text" name="username" autocomplete="username" value="${esc(me.email)}" hidden>
<label for="current-password">Current password<input id="current-password" name="current" type="password" autocomplete="current-password" required></label>
<label for="new-password">New password<input id="new-password" name="password" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}" required></label>
<label for="confirm-password">New password again<input id="confirm-password" name="confirm" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}" required></label>
<button class="btn" type="submit">Change password</button>
</form></section>`;
}
