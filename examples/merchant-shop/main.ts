/**
 * Runs the example shop:
 *
 *   PAYGATE_API_KEY=sk_test_… PAYGATE_WEBHOOK_SECRET=whsec_… node --import tsx examples/merchant-shop/main.ts
 *
 * Settings: PAYGATE_BASE_URL (default http://localhost:8080), PORT (default 3000), and
 * SHOP_PUBLIC_URL, the address at which Paygate reaches this shop (sent as callback_url; without
 * it the merchant's default callback URL is used).
 */
import { Paygate } from '../../client/src/index.ts';
import { createShop } from './shop.ts';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is required (see examples/merchant-shop/README.md)`);
    process.exit(2);
  }
  return value;
}

const paygate = new Paygate({
  apiKey: required('PAYGATE_API_KEY'),
  baseUrl: process.env.PAYGATE_BASE_URL ?? 'http://localhost:8080',
  timeoutMs: 10_000,
});
const shop = createShop({
  paygate,
  webhookSecret: required('PAYGATE_WEBHOOK_SECRET'),
  publicUrl: process.env.SHOP_PUBLIC_URL?.replace(/\/+$/, ''),
});
const address = await shop.listen(Number(process.env.PORT ?? 3000));
console.log(
  `chai shop on ${address}  (callbacks: POST ${process.env.SHOP_PUBLIC_URL ?? address}/paygate/callback)`,
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void shop.close().then(() => process.exit(0)));
}
