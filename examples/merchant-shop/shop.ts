/**
 * A tiny merchant shop on node:http that takes payments through Paygate with the SDK:
 *
 *   GET  /                    the product and a "Pay" button
 *   POST /orders              creates the order and an onsite pay-in, sends the customer (303) to the payment page
 *   GET  /orders/:id          the order as the customer sees it (paid once a verified callback said so)
 *   GET  /orders/:id.json     the same as JSON
 *   POST /paygate/callback    Paygate's signed callback: verified, then the order is marked paid or failed
 *
 * Orders live in memory; a real shop keeps them in its database and makes the callback update
 * idempotent the same way (by payment_id, final statuses never change).
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
// In your own app: import { … } from '@paygate/client';
import {
  createCallbackHandler,
  PaygateError,
  type Paygate,
  type PaygateCallback,
} from '../../client/src/index.ts';

export interface Order {
  id: string;
  item: string;
  /** Rupees, as the API has them. */
  amount: number;
  currency: string;
  status: 'awaiting_payment' | 'paid' | 'failed';
  payment_id: string | null;
  payment_url: string | null;
  utr: string | null;
  /** How the order learnt its final status. */
  settled_by: 'verified callback' | null;
}

export interface ShopOptions {
  paygate: Paygate;
  webhookSecret: string;
  /**
   * Where Paygate can reach this shop, to send `callback_url` with each pay-in. Without it the
   * merchant's default callback URL (set when the merchant was created) is used.
   */
  publicUrl?: string;
  log?: (line: string) => void;
}

export interface Shop {
  server: http.Server;
  orders: Map<string, Order>;
  /** Callbacks refused (bad signature or body), for the operator. */
  rejectedCallbacks: number;
  listen(port: number, host?: string): Promise<string>;
  close(): Promise<void>;
}

const PRODUCT = { item: 'Masala chai starter kit', amount: 499, currency: 'INR' };

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(title: string, body: string, refresh = false): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>${
    refresh ? '<meta http-equiv="refresh" content="3">' : ''
  }<meta name="viewport" content="width=device-width, initial-scale=1"></head><body style="font-family:system-ui;max-width:32rem;margin:3rem auto">${body}</body></html>`;
}

const STATUS_TEXT: Record<Order['status'], string> = {
  awaiting_payment: 'Waiting for your payment…',
  paid: 'Paid — thank you!',
  failed: 'Payment failed',
};

export function createShop(options: ShopOptions): Shop {
  const { paygate } = options;
  const log = options.log ?? ((line: string) => console.log(line));
  const orders = new Map<string, Order>();

  /** Applies a verified callback. Repeats (a retried delivery) change nothing. */
  async function onCallback(cb: PaygateCallback): Promise<void> {
    const order = orders.get(cb.merchant_order_no);
    // Signed by Paygate, yet not ours to act on: acknowledge it so it is not retried, and log it.
    if (!order || order.payment_id !== cb.payment_id) {
      log(`callback for unknown order ${cb.merchant_order_no} / ${cb.payment_id}: ignored`);
      return;
    }
    if (cb.amount !== order.amount || cb.currency !== order.currency) {
      log(
        `callback for ${order.id} with ${cb.amount} ${cb.currency}, expected ${order.amount} ${order.currency}: ignored`,
      );
      return;
    }
    if (order.status !== 'awaiting_payment') return;
    order.status = cb.status === 'SUCCESS' ? 'paid' : 'failed';
    order.utr = cb.utr || null;
    order.settled_by = 'verified callback';
    log(`order ${order.id} is ${order.status} (payment ${cb.payment_id}, utr ${cb.utr || '-'})`);
  }

  const shop: Shop = {
    server: http.createServer(),
    orders,
    rejectedCallbacks: 0,
    listen(port, host = '127.0.0.1') {
      return new Promise((resolve) => {
        shop.server.listen(port, host, () =>
          resolve(`http://${host}:${(shop.server.address() as AddressInfo).port}`),
        );
      });
    },
    close() {
      return new Promise((resolve) => {
        shop.server.closeAllConnections();
        shop.server.close(() => resolve());
      });
    },
  };

  const callbackHandler = createCallbackHandler({
    secret: options.webhookSecret,
    onCallback,
    onRejected: (reason) => {
      shop.rejectedCallbacks++;
      log(`callback refused: ${reason}`);
    },
  });

  async function createOrder(res: http.ServerResponse): Promise<void> {
    // Unique per order and within the onsite limit of 32 characters.
    const id = `chai-${randomBytes(8).toString('hex')}`;
    const order: Order = {
      id,
      ...PRODUCT,
      status: 'awaiting_payment',
      payment_id: null,
      payment_url: null,
      utr: null,
      settled_by: null,
    };
    orders.set(id, order);
    try {
      const payin = await paygate.createOnsitePayin({
        money: { amount: order.amount, currency: order.currency },
        merchant_order_no: id,
        ...(options.publicUrl ? { callback_url: `${options.publicUrl}/paygate/callback` } : {}),
      });
      order.payment_id = payin.payment_id;
      order.payment_url = payin.payment_url;
      res.writeHead(303, { location: payin.payment_url }).end();
    } catch (err) {
      orders.delete(id);
      const why = err instanceof PaygateError ? err.message : 'unexpected error';
      log(`could not create the pay-in for ${id}: ${String(err)}`);
      res
        .writeHead(502, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          page(
            'Payment unavailable',
            `<p>We could not start the payment (${escape(why)}). Please try again.</p>`,
          ),
        );
    }
  }

  function showOrder(res: http.ServerResponse, id: string, asJson: boolean): void {
    const order = orders.get(id);
    if (!order) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such order\n');
      return;
    }
    if (asJson) {
      res
        .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
        .end(JSON.stringify(order));
      return;
    }
    const pay =
      order.status === 'awaiting_payment' && order.payment_url
        ? `<p><a href="${escape(order.payment_url)}">Go to the payment page</a></p>`
        : '';
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      .end(
        page(
          `Order ${order.id}`,
          `<h1>Order ${escape(order.id)}</h1><p>${escape(order.item)}: ₹${order.amount.toFixed(2)}</p><p id="status" data-status="${order.status}"><strong>${STATUS_TEXT[order.status]}</strong></p>${pay}`,
          order.status === 'awaiting_payment',
        ),
      );
  }

  shop.server.on('request', (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const orderPath = /^\/orders\/([A-Za-z0-9-]+?)(\.json)?$/.exec(path);
    if (req.method === 'POST' && path === '/paygate/callback') return void callbackHandler(req, res);
    if (req.method === 'POST' && path === '/orders') {
      req.resume();
      return void createOrder(res);
    }
    if (req.method === 'GET' && orderPath) return showOrder(res, orderPath[1]!, orderPath[2] === '.json');
    if (req.method === 'GET' && path === '/') {
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          page(
            'Chai shop',
            `<h1>${escape(PRODUCT.item)}</h1><p>₹${PRODUCT.amount.toFixed(2)}</p><form method="post" action="/orders"><button>Pay with UPI</button></form>`,
          ),
        );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });

  return shop;
}
