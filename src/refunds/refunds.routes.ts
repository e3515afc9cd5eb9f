/** HTTP for refunds: creation and `refund_status` (contract §12). */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { errorResponses, success, type CommonSchemas } from '../http/common.schemas.ts';
import { REFUND_CALLBACKS } from '../callbacks/callbacks.openapi.ts';
import { principalOf } from '../http/auth.ts';
import { sendCreated } from '../http/reply.ts';
import type { RefundService } from './refunds.service.ts';
import { refundSchemas, RefundIdBody, RefundResponse, RefundStatusResponse } from './refunds.schemas.ts';

export interface RefundRoutesOptions {
  refunds: RefundService;
  schemas: CommonSchemas;
}

const security = [{ bearerAuth: [] }];

export const refundRoutes: FastifyPluginAsync<RefundRoutesOptions> = async (
  fastify,
  { refunds, schemas },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const s = refundSchemas(schemas);

  app.post(
    '/payments/refund',
    {
      schema: {
        tags: ['Refunds'],
        summary: 'Refund all or part of a SUCCESS pay-in, held against the available balance',
        description:
          'The refunds of a pay-in that are not FAILED never add up to more than its amount (400 REFUND_EXCEEDS_PAYMENT, ' +
          'metadata.refundable); the amount is held from the available balance (400 INSUFFICIENT_BALANCE). ' +
          "404 PAYMENT_NOT_FOUND for an unknown pay-in or another merchant's; 409 PAYMENT_NOT_REFUNDABLE when it is not SUCCESS; " +
          "409 PAYMENT_DISPUTED while a customer's dispute of it is open; " +
          '409 DUPLICATE_REFUND_NO when merchant_refund_no was used with another request.',
        security,
        body: s.Refund,
        response: {
          200: success(RefundResponse, 'Accepted and held (or replayed); status PENDING', {
            'Idempotent-Replayed':
              'true when this is the original response of an earlier request with the same merchant_refund_no and body',
          }),
          ...errorResponses(400, 404, 409),
        },
        callbacks: REFUND_CALLBACKS,
      },
    },
    async (req, reply) => sendCreated(reply, await refunds.create(principalOf(req), req.body)),
  );

  app.post(
    '/payments/refund_status',
    {
      schema: {
        tags: ['Refunds'],
        summary: 'Status of a refund',
        security,
        body: RefundIdBody,
        response: {
          200: success(RefundStatusResponse, 'The refund as Paygate has it now'),
          ...errorResponses(404),
        },
      },
    },
    async (req) => refunds.status(principalOf(req), req.body.refund_id),
  );
};
