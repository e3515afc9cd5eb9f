/** HTTP for callbacks: a merchant asks for the callback of a final transaction again. */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses } from '../http/common.schemas.ts';
import { ValidationError } from '../errors.ts';
import { principalOf } from '../http/auth.ts';
import type { CallbackService } from './callbacks.service.ts';

export const ResendResponse = Type.Object(
  {
    success: Type.Literal(true),
    payment_id: Type.Optional(Type.String({ description: 'The pay-in or payout, when one was named' })),
    refund_id: Type.Optional(Type.String({ description: 'The refund, when one was named' })),
    delivery_id: Type.String({ description: 'The new delivery; it starts again at attempt 1.' }),
    status: Type.Literal('pending'),
  },
  { title: 'CallbackResendResponse' },
);

const Id = Type.String({ minLength: 1, maxLength: 64 });
const ResendRequest = Type.Object(
  { payment_id: Type.Optional(Id), refund_id: Type.Optional(Id) },
  {
    description: 'Exactly one of payment_id (a pay-in or payout) and refund_id (a refund).',
    examples: [{ payment_id: 'pQ7rT2mX9kL4vN8bC3zW6yH1jF5gD0sA' }],
  },
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
        summary: 'Send the callback of a final pay-in, payout or refund again',
        description:
          "Queues a fresh delivery of the callback for the transaction's final status, with a fresh attempt count and the same retry schedule. 404 for an unknown payment_id or refund_id, 409 INVALID_STATE when the transaction is not final yet or has no callback URL.",
        security: [{ bearerAuth: [] }],
        body: ResendRequest,
        response: { 200: ResendResponse, ...errorResponses(404, 409) },
      },
    },
    async (req) => {
      const { payment_id: paymentId, refund_id: refundId } = req.body;
      const merchantId = principalOf(req).merchantId;
      if (paymentId !== undefined && refundId !== undefined)
        throw new ValidationError([
          { loc: ['body'], msg: 'Value error, give payment_id or refund_id, not both', type: 'value_error' },
        ]);
      if (refundId !== undefined) return callbacks.resend({ refundId }, merchantId);
      if (paymentId === undefined)
        throw new ValidationError([{ loc: ['body', 'payment_id'], msg: 'Field required', type: 'missing' }]);
      return callbacks.resend({ paymentId }, merchantId);
    },
  );
};
