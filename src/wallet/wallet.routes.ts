/** HTTP for the merchant's own balance (docs/integration.md §3). */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Config } from '../config.ts';
import { errorResponses } from '../http/common.schemas.ts';
import { principalOf } from '../http/auth.ts';
import { toRupees } from '../money.ts';
import { checkCurrency } from '../payments/currency.ts';
import type { WalletService } from './wallet.service.ts';

export const BalanceResponse = Type.Object(
  {
    currency: Type.String(),
    available: Type.Number({ description: 'Rupees that payouts can use.' }),
    held: Type.Number({ description: 'Rupees held for payouts not final yet.' }),
  },
  { title: 'Balance' },
);

const BalanceRequest = Type.Unsafe<{ currency?: string | null } | null>({
  type: ['object', 'null'],
  properties: { currency: { type: ['string', 'null'], description: 'Defaults to INR.' } },
  examples: [{ currency: 'INR' }],
});

export const walletRoutes: FastifyPluginAsync<{ wallets: WalletService; config: Config }> = async (
  fastify,
  { wallets, config },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/wallet/balance',
    {
      schema: {
        tags: ['Wallet'],
        summary: "The merchant's wallet balance (an empty body asks for INR)",
        security: [{ bearerAuth: [] }],
        body: BalanceRequest,
        response: { 200: BalanceResponse, ...errorResponses(400) },
      },
      // An empty body is allowed here: it reaches the validator as undefined.
      preValidation: async (req) => {
        if (req.body === undefined) req.body = null;
      },
    },
    async (req) => {
      const currency = checkCurrency(config, req.body?.currency);
      const b = await wallets.balance(principalOf(req).merchantId, currency);
      return { currency: b.currency, available: toRupees(b.available), held: toRupees(b.held) };
    },
  );
};
