/** HTTP for payouts: endpoints 4 and 6 of the seed. */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { errorResponses, PaymentIdBody, type CommonSchemas } from '../http/common.schemas.ts';
import { principalOf } from '../http/auth.ts';
import { sendCreated } from '../http/reply.ts';
import { StatusResponse } from '../payins/payins.schemas.ts';
import type { PayoutService } from './payouts.service.ts';
import { payoutSchemas, PayoutResponse } from './payouts.schemas.ts';

export interface PayoutRoutesOptions {
  payouts: PayoutService;
  schemas: CommonSchemas;
}

const security = [{ bearerAuth: [] }];

export const payoutRoutes: FastifyPluginAsync<PayoutRoutesOptions> = async (fastify, { payouts, schemas }) => {
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
        response: { 200: PayoutResponse, ...errorResponses(400, 409) },
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
        body: PaymentIdBody,
        response: { 200: StatusResponse, ...errorResponses(404) },
      },
    },
    async (req) => payouts.status(principalOf(req), req.body.payment_id),
  );
};
