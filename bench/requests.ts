/**
 * The requests each scenario sends. Creation requests carry a fresh merchant_order_no each time
 * (autocannon's setupRequest), so every request creates a transaction instead of replaying one.
 */
import { randomBytes } from 'node:crypto';
import type { RequestSpec } from 'autocannon';
import { filledPaymentId } from './store.ts';

const RUN_TAG = randomBytes(3).toString('hex');
let seq = 0;

/** At most 20 characters: within every flow's limit (onsite and payout allow 32). */
export function nextOrderNo(prefix: string): string {
  return `${prefix}${RUN_TAG}${(seq++).toString(36)}`;
}

const USER = { phone_number: '9876543210', user_name: 'Bench Customer', email: 'customer@example.com' };

export function payinBody(prefix: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    money: { amount: 500, currency: 'INR' },
    merchant_order_no: nextOrderNo(prefix),
    user_details: USER,
    ...extra,
  });
}

export function payoutBody(prefix: string): string {
  return JSON.stringify({
    money: { amount: 1, currency: 'INR' },
    merchant_order_no: nextOrderNo(prefix),
    receiver: { name: 'Bench Receiver', account_no: '123456789012', ifsc_code: 'HDFC0001234' },
    user_details: USER,
  });
}

/**
 * A refund of 1.00 of a random SUCCESS pay-in among the `rows` bulk-loaded ones of `fillPayins`'s
 * prefix "rfnd" (numbers ending in 1 to 7 are SUCCESS). With enough rows (`--refund-rows`) a pay-in
 * gets a refund or two over a bench run, as in a real shop; with few, every pay-in gathers many and
 * each refund adds up more of them.
 */
export function refundBody(prefix: string, rows: number): string {
  const i = 10 * Math.floor(Math.random() * Math.floor(rows / 10)) + 1 + Math.floor(Math.random() * 7);
  return JSON.stringify({
    payment_id: filledPaymentId(i, 'rfnd'),
    money: { amount: 1, currency: 'INR' },
    merchant_refund_no: nextOrderNo(prefix),
  });
}

function json(apiKey: string | null): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey) h.authorization = `Bearer ${apiKey}`;
  return h;
}

/** POST `path` with a body made fresh for every request. `keys` rotate when there are several. */
export function freshPosts(path: string, keys: (string | null)[], body: () => string): RequestSpec[] {
  let turn = 0;
  const headers = keys.map(json);
  return [
    {
      method: 'POST',
      path,
      headers: headers[0],
      setupRequest: (req) => {
        req.body = body();
        if (headers.length > 1) req.headers = headers[turn++ % headers.length];
        return req;
      },
    },
  ];
}

/** Status queries for random pay-ins among the `rows` bulk-loaded ones. */
export function statusPosts(path: string, apiKey: string | null, rows: number): RequestSpec[] {
  return freshPosts(path, [apiKey], () =>
    JSON.stringify({ payment_id: filledPaymentId(1 + Math.floor(Math.random() * rows)) }),
  );
}
