/** HTTP for payouts: creation and `payout_status`. */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { CREATION_HEADERS, errorResponses, success, type CommonSchemas } from '../http/common.schemas.ts';
import { CALLBACKS } from '../callbacks/callbacks.openapi.ts';
import { principalOf } from '../http/auth.ts';
import { sendCreated } from '../http/reply.ts';
import type { PayoutService } from './payouts.service.ts';
import { payoutSchemas, PayoutResponse, PayoutStatusResponse } from './payouts.schemas.ts';

export interface PayoutRoutesOptions {
  payouts: PayoutService;
  schemas: CommonSchemas;
}

const security = [{ bearerAuth: [] }];

export const payoutRoutes: FastifyPluginAsync<PayoutRoutesOptions> = async (
  fastify,
  { payouts, schemas },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const s = payoutSchemas(schemas);

  app.post(
    '/payments/payout',
    {
      schema: {
        tags: ['Payouts'],
        summary: 'Create a payout to a bank account, held against the available balance',
        security,
        body: s.Payout,
        response: {
          200: success(PayoutResponse, 'Accepted and held (or replayed); status PENDING', CREATION_HEADERS),
          ...errorResponses(400, 409),
        },
        callbacks: CALLBACKS,
      },
    },
    async (req, reply) => sendCreated(reply, await payouts.create(principalOf(req), req.body)),
  );

  app.post(
    '/payments/payout_status',
    {
      schema: {
        tags: ['Payouts'],
        summary: 'Status of a payout',
        security,
        description: 'By the payment_id Paygate answered with, or by your own merchant_order_no.',
        body: schemas.StatusBody(32),
        response: {
          200: success(PayoutStatusResponse, 'The payout as Paygate has it now'),
          ...errorResponses(404),
        },
      },
    },
    async (req) => payouts.status(principalOf(req), req.body),
  );
};
