/** HTTP for pay-ins: the three creation endpoints (onsite, offsite, P2P) and `payin_status`. */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { CREATION_HEADERS, errorResponses, success, type CommonSchemas } from '../http/common.schemas.ts';
import { principalOf } from '../http/auth.ts';
import { sendCreated } from '../http/reply.ts';
import type { PayinService } from './payins.service.ts';
import { CALLBACKS } from '../callbacks/callbacks.openapi.ts';
import {
  OffsitePayinResponse,
  PagePayinResponse,
  payinSchemas,
  PayinStatusResponse,
  type PayinRequest,
} from './payins.schemas.ts';

export interface PayinRoutesOptions {
  payins: PayinService;
  schemas: CommonSchemas;
}

const security = [{ bearerAuth: [] }];

export const payinRoutes: FastifyPluginAsync<PayinRoutesOptions> = async (fastify, { payins, schemas }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const s = payinSchemas(schemas);
  const creations = [
    {
      flow: 'onsite',
      body: s.Onsite,
      response: PagePayinResponse,
      summary: 'Create an onsite pay-in (payment page hosted by Paygate)',
    },
    {
      flow: 'offsite',
      body: s.Offsite,
      response: OffsitePayinResponse,
      summary: 'Create an offsite pay-in (UPI QR code, cashier link and deep links)',
    },
    { flow: 'p2p', body: s.P2P, response: PagePayinResponse, summary: 'Create a P2P pay-in (redirect flow)' },
  ] as const;

  for (const c of creations) {
    app.post(
      `/payments/${c.flow}/payin`,
      {
        schema: {
          tags: ['Pay-ins'],
          summary: c.summary,
          security,
          body: c.body,
          response: {
            200: success(c.response, 'Created (or replayed)', {
              ...CREATION_HEADERS,
              Deprecation: 'true when the deprecated phone field was used',
            }),
            ...errorResponses(400, 409),
          },
          callbacks: CALLBACKS,
        },
      },
      async (req, reply) => {
        const body = req.body as PayinRequest;
        return sendCreated(
          reply,
          await payins.create(principalOf(req), c.flow, body),
          typeof body.phone === 'string',
        );
      },
    );
  }

  app.post(
    '/payments/payin_status',
    {
      schema: {
        tags: ['Pay-ins'],
        summary: 'Status of a pay-in',
        security,
        description: 'By the payment_id Paygate answered with, or by your own merchant_order_no.',
        body: schemas.StatusBody(36),
        response: {
          200: success(PayinStatusResponse, 'The pay-in as Paygate has it now'),
          ...errorResponses(404),
        },
      },
    },
    async (req) => payins.status(principalOf(req), req.body),
  );
};
