/** The overview (`/dashboard`) and the ledger: balances, volumes and the entries behind them. */
import type { FastifyInstance } from 'fastify';
import { esc, page } from '../views/layout.ts';
import { ledgerBody, merchantPicker } from '../views/manage.ts';
import { attentionCards, overviewBody } from '../views/overview.ts';
import { badQuery, html, stringQuery, type DashboardContext } from './http.ts';

export function overviewRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  const { dashboard, currencies, user, frame } = ctx;

  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const u = user(req);
    const q = stringQuery(req);
    const merchantId = await dashboard.scope(u, q.merchant);
    const currency = q.currency && currencies.includes(q.currency) ? q.currency : (currencies[0] ?? 'INR');
    const { wallets, days, failedDeliveries } = await dashboard.overview(merchantId, currency);
    // The volume is of one currency; with more than one supported, the page offers the choice.
    const currencyPicker =
      currencies.length > 1
        ? `<label for="pick-currency">Currency<select id="pick-currency" name="currency">${currencies.map((c) => `<option${c === currency ? ' selected' : ''}>${esc(c)}</option>`).join('')}</select></label>`
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
    // What waits for the user: callbacks that failed every attempt, and the open exceptions it may
    // see (every one for an operator; those naming its merchant for a merchant's user).
    const open = await dashboard.oversight.openExceptions(u);
    const failedHref = `/dashboard/transactions?${new URLSearchParams({ delivery: 'failed', ...(u.role === 'operator' && merchantId ? { merchant: merchantId } : {}) }).toString()}`;
    return html(
      reply,
      200,
      page(
        frame(req, 'overview', 'Overview'),
        attentionCards(failedDeliveries, failedHref, open) + overviewBody(wallets, days, picker, currency),
      ),
    );
  });

  app.get('/ledger', { schema: { hide: true } }, async (req, reply) => {
    const u = user(req);
    const q = stringQuery(req);
    const merchantId = await dashboard.scope(u, q.merchant);
    const account = q.account === 'held' ? 'held' : 'available';
    const currency = q.currency && currencies.includes(q.currency) ? q.currency : 'INR';
    const accountPicker = `<label for="pick-account">Account<select id="pick-account" name="account"><option value="available"${account === 'available' ? ' selected' : ''}>Available</option><option value="held"${account === 'held' ? ' selected' : ''}>Held</option></select></label><label for="pick-currency">Currency<select id="pick-currency" name="currency">${currencies.map((c) => `<option${c === currency ? ' selected' : ''}>${c}</option>`).join('')}</select></label>`;
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
}
