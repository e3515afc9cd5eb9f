/** The currency check every request with money (or a currency) goes through. */
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';

/** The request's currency, INR when none is given; 400 when the gateway does not support it. */
export function checkCurrency(config: Config, currency: string | null | undefined): string {
  const c = currency ?? 'INR';
  if (!config.supportedCurrencies.includes(c)) {
    throw new AppError('VALIDATION_INVALID_CURRENCY', `Currency ${c.slice(0, 8)} is not supported`, {
      supported_currencies: [...config.supportedCurrencies],
    });
  }
  return c;
}
