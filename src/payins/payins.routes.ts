/** HTTP for pay-ins: endpoints 1, 2, 3 and 5 of the seed. */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  CREATION_HEADERS,
  errorResponses,
  PaymentIdBody,
  success,
  type CommonSchemas,
} from '../http/common.schemas.ts';
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
  const usesPhone = (body: PayinRequest) => typeof body.phone === 'string';

  app.post(
    '/payments/onsite/payin',
    {
      schema: {
        tags: ['Pay-ins'],
        summary: 'Create an onsite pay-in (payment page hosted by Paygate)',
        security,
        body: s.Onsite,
        response: {
          200: success(PagePayinResponse, 'Created (or replayed)', {
            ...CREATION_HEADERS,
            Deprecation: 'true when the deprecated phone field was used',
          }),
          ...errorResponses(400, 409),
        },
        callbacks: CALLBACKS,
      },
    },
    async (req, reply) =>
      sendCreated(reply, await payins.create(principalOf(req), 'onsite', req.body), usesPhone(req.body)),
  );

  app.post(
    '/payments/offsite/payin',
    {
      schema: {
        tags: ['Pay-ins'],
        summary: 'Create an offsite pay-in (UPI QR code, cashier link and deep links)',
        security,
        body: s.Offsite,
        response: {
          200: success(OffsitePayinResponse, 'Created (or replayed)', {
            ...CREATION_HEADERS,
            Deprecation: 'true when the deprecated phone field was used',
          }),
          ...errorResponses(400, 409),
        },
        callbacks: CALLBACKS,
      },
    },
    async (req, reply) =>
      sendCreated(reply, await payins.create(principalOf(req), 'offsite', req.body), usesPhone(req.body)),
  );

  app.post(
    '/payments/p2p/payin',
    {
      schema: {
        tags: ['Pay-ins'],
        summary: 'Create a P2P pay-in (redirect flow)',
        security,
        body: s.P2P,
        response: {
          200: success(PagePayinResponse, 'Created (or replayed)', {
            ...CREATION_HEADERS,
            Deprecation: 'true when the deprecated phone field was used',
          }),
          ...errorResponses(400, 409),
        },
        callbacks: CALLBACKS,
      },
    },
    async (req, reply) =>
      sendCreated(reply, await payins.create(principalOf(req), 'p2p', req.body), usesPhone(req.body)),
  );

  app.post(
    '/payments/payin_status',
    {
      schema: {
        tags: ['Pay-ins'],
        summary: 'Status of a pay-in',
        security,
        body: PaymentIdBody,
        response: {
          200: success(PayinStatusResponse, 'The pay-in as Paygate has it now'),
          ...errorResponses(404),
        },
      },
    },
    async (req) => payins.status(principalOf(req), req.body.payment_id),
  );
};
