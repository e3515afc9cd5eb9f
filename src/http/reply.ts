/** Sending what a creation endpoint produced: a fresh body, or a replay of the stored one. */
import type { FastifyReply } from 'fastify';
import type { Created } from '../payments/idempotency.ts';

export function sendCreated<T>(reply: FastifyReply, created: Created<T>, deprecated = false): FastifyReply {
  if (created.replayed) reply.header('Idempotent-Replayed', 'true');
  if (deprecated) reply.header('Deprecation', 'true');
  if (typeof created.body === 'string') {
    // The stored original response, byte for byte.
    return reply.type('application/json; charset=utf-8').send(created.body);
  }
  return reply.send(created.body);
}
