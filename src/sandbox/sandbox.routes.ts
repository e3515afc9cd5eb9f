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

const CompleteRequest = Type.Object(
  {
    payment_id: Type.String({ minLength: 1, maxLength: 64 }),
    // One enum rather than a union of literals: a union reports only its first branch, so a wrong
    // value was answered "Input should be 'SUCCESS'" as if FAILED were not allowed.
    status: Type.Unsafe<'SUCCESS' | 'FAILED'>({ type: 'string', enum: ['SUCCESS', 'FAILED'] }),
  },
  { examples: [{ payment_id: 'pQ7rT2mX9kL4vN8bC3zW6yH1jF5gD0sA', status: 'SUCCESS' }] },
);

export const CompleteResponse = Type.Object(
  {
    payment_id: Type.String(),
    status: Type.String(),
    money: Type.Object({ amount: Type.Number(), currency: Type.String() }),
    channel_txn_id: Type.String(),
    utr: Type.String(),
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
          body: CompleteRequest,
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
