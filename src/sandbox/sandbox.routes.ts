/** HTTP for settling a sandbox pay-in, payout or refund at once, test keys only (docs/integration.md §8). */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses } from '../http/common.schemas.ts';
import { principalOf } from '../http/auth.ts';
import { RefundStatusResponse } from '../refunds/refunds.schemas.ts';
import type { SandboxService } from './sandbox.service.ts';

const SandboxStatus = Type.Unsafe<'SUCCESS' | 'FAILED'>({ type: 'string', enum: ['SUCCESS', 'FAILED'] });

const CompleteRefundRequest = Type.Object(
  { refund_id: Type.String({ minLength: 1, maxLength: 64 }), status: SandboxStatus },
  { examples: [{ refund_id: 'rK2mX9kL4vN8bC3zW6yH1jF5gD0sApQ7', status: 'SUCCESS' }] },
);

/** A pay-in settles SUCCESS or FAILED; a payout may also be REVERSED once it is SUCCESS. */
function completeRequest<S extends string>(statuses: readonly S[]) {
  return Type.Object(
    {
      payment_id: Type.String({ minLength: 1, maxLength: 64 }),
      // One enum rather than a union of literals: a union reports only its first branch, so a wrong
      // value was answered "Input should be 'SUCCESS'" as if FAILED were not allowed.
      status: Type.Unsafe<S>({ type: 'string', enum: [...statuses] }),
    },
    { examples: [{ payment_id: 'pQ7rT2mX9kL4vN8bC3zW6yH1jF5gD0sA', status: 'SUCCESS' }] },
  );
}
const COMPLETE_REQUESTS = {
  payin: completeRequest(['SUCCESS', 'FAILED'] as const),
  payout: completeRequest(['SUCCESS', 'FAILED', 'REVERSED'] as const),
};

export const CompleteResponse = Type.Object(
  {
    payment_id: Type.String(),
    status: Type.String(),
    money: Type.Object({ amount: Type.Number(), currency: Type.String() }),
    channel_txn_id: Type.String(),
    utr: Type.String(),
    reversed: Type.Optional(
      Type.Boolean({ description: 'true after a REVERSED (the status stays SUCCESS)' }),
    ),
  },
  { title: 'SandboxCompleteResponse' },
);

export const sandboxRoutes: FastifyPluginAsync<{ sandbox: SandboxService }> = async (
  fastify,
  { sandbox },
) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  for (const kind of ['payin', 'payout'] as const) {
    app.post(
      `/sandbox/${kind}/complete`,
      {
        schema: {
          tags: ['Sandbox'],
          summary: `Settle a sandbox ${kind === 'payin' ? 'pay-in' : 'payout'} at once (test keys only)`,
          security: [{ bearerAuth: [] }],
          body: COMPLETE_REQUESTS[kind],
          response: { 200: CompleteResponse, ...errorResponses(404, 409) },
        },
      },
      async (req) => sandbox.complete(principalOf(req), kind, req.body.payment_id, req.body.status),
    );
  }
  app.post(
    '/sandbox/refund/complete',
    {
      schema: {
        tags: ['Sandbox'],
        summary: 'Settle a sandbox refund at once (test keys only)',
        security: [{ bearerAuth: [] }],
        body: CompleteRefundRequest,
        response: { 200: RefundStatusResponse, ...errorResponses(404, 409) },
      },
    },
    async (req) => sandbox.completeRefund(principalOf(req), req.body.refund_id, req.body.status),
  );
};
