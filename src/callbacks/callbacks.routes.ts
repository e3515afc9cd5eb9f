/** HTTP for callbacks: a merchant asks for the callback of a final transaction again. */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses, PaymentIdBody } from '../http/common.schemas.ts';
import { principalOf } from '../http/auth.ts';
import type { CallbackService } from './callbacks.service.ts';

export const ResendResponse = Type.Object(
  {
    success: Type.Literal(true),
    payment_id: Type.String(),
    delivery_id: Type.String({ description: 'The new delivery; it starts again at attempt 1.' }),
    status: Type.Literal('pending'),
  },
  { title: 'CallbackResendResponse' },
);

export const callbackRoutes: FastifyPluginAsync<{ callbacks: CallbackService }> = async (
  fastify,
  { callbacks },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/callbacks/resend',
    {
      schema: {
        tags: ['Callbacks'],
        summary: 'Send the callback of a final pay-in or payout again',
        description:
          "Queues a fresh delivery of the callback for the transaction's final status, with a fresh attempt count and the same retry schedule. 404 for an unknown payment_id, 409 INVALID_STATE when the transaction is not final yet or has no callback URL.",
        security: [{ bearerAuth: [] }],
        body: PaymentIdBody,
        response: { 200: ResendResponse, ...errorResponses(404, 409) },
      },
    },
    async (req) => callbacks.resend(req.body.payment_id, principalOf(req).merchantId),
  );
};
