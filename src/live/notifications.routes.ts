/**
 * `POST /channels/{provider}/notifications`, one per live channel's `NotificationReader`: where the
 * providers send their notifications. No API key: the signature on the raw body is the
 * authentication, checked before anything else, and no limiter stands in front of it (CONTRACT §10,
 * "Intake that cannot be starved"): a bad signature is 401 and counted for its endpoint apart from
 * failed API keys (`SignatureFailures`), so forged posts never delay a verified notification, even
 * from the load balancer's address. A channel that is not configured has no endpoint (404); other
 * methods than POST are 405, as on the API's paths.
 */
import type { FastifyPluginAsync } from 'fastify';
import { AppError } from '../errors.ts';
import { errorResponses } from '../http/common.schemas.ts';
import type { NotificationResult } from '../http/metrics.ts';
import type { NotificationService } from './notifications.service.ts';

export const notificationRoutes: FastifyPluginAsync<{
  notifications: NotificationService;
  count: (channel: string, result: NotificationResult) => void;
}> = async (app, { notifications, count }) => {
  // The signature covers the bytes as sent, so the body is kept as bytes, whatever its type says.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  for (const { provider, title } of notifications.readers) {
    app.post(
      `/channels/${provider}/notifications`,
      {
        schema: {
          tags: ['Channels'],
          summary: `Notifications from ${title} (signed by the provider)`,
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
        if (!notifications.accepts(provider)) {
          count(provider, 'not_configured');
          throw new AppError('NOT_FOUND', `The ${provider} channel is not configured on this gateway`);
        }
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        try {
          const { duplicate } = await notifications.receive(provider, raw, req.headers, req.ip);
          count(provider, duplicate ? 'duplicate' : 'accepted');
          return { status: 'ok', duplicate };
        } catch (err) {
          if (err instanceof AppError && err.errorCode === 'SIGNATURE_INVALID')
            count(provider, 'signature_invalid');
          throw err;
        }
      },
    );
  }
};
