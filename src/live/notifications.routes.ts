/**
 * `POST /channels/setu/notifications` and `POST /channels/cashfree/notifications`: where the
 * providers send their notifications. No API key: the signature on the raw body is the
 * authentication. A channel that is not configured has no endpoint (404).
 */
import type { FastifyPluginAsync } from 'fastify';
import { AppError } from '../errors.ts';
import { errorResponses } from '../http/common.schemas.ts';
import type { NotificationService, Provider } from './notifications.service.ts';

export const notificationRoutes: FastifyPluginAsync<{ notifications: NotificationService }> = async (
  app,
  { notifications },
) => {
  // The signature covers the bytes as sent, so the body is kept as bytes, whatever its type says.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  for (const provider of ['setu', 'cashfree'] as const satisfies Provider[]) {
    app.post(
      `/channels/${provider}/notifications`,
      {
        schema: {
          tags: ['Channels'],
          summary: `Notifications from ${provider === 'setu' ? 'Setu UPI' : 'Cashfree Payouts'} (signed by the provider)`,
          response: {
            200: {
              type: 'object',
              properties: { status: { type: 'string' }, duplicate: { type: 'boolean' } },
            },
            ...errorResponses(401, 404),
          },
        },
      },
      async (req) => {
        if (!notifications.accepts(provider))
          throw new AppError('NOT_FOUND', `The ${provider} channel is not configured on this gateway`);
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const { duplicate } = await notifications.receive(provider, raw, req.headers);
        return { status: 'ok', duplicate };
      },
    );
  }
};
