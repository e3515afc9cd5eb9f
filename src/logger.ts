/** The process's logger: pino JSON at LOG_LEVEL, with every path that may carry a secret redacted. */
import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

/** Log paths that may carry a secret, a key or an account number. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.api_key',
  '*.webhook_secret',
  '*.previous_webhook_secret',
  '*.account_no',
  '*.receiver_account_no',
  'err.config',
  // Database errors can quote a failing row; rows may hold account numbers.
  'err.detail',
  'err.where',
  'err.parameters',
];

export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, redact: { paths: REDACT, censor: '[redacted]' } });
}
