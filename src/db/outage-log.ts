/**
 * For a loop that polls the database: a failure because the database is unavailable is logged
 * once, when it starts, and its end once; any other failure is an error every time.
 */
import { isUnavailableError } from './errors.ts';

export interface OutageLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export class OutageLog {
  private down = false;

  constructor(
    private readonly logger: OutageLogger,
    private readonly who: string,
  ) {}

  failed(err: unknown, msg: string, context: object = {}): void {
    if (!isUnavailableError(err)) {
      this.logger.error({ err, ...context }, msg);
      return;
    }
    if (this.down) return;
    this.down = true;
    this.logger.warn(
      { code: (err as { code?: unknown }).code, reason: (err as Error).message },
      `${this.who}: database unavailable; polling until it is back`,
    );
  }

  ok(): void {
    if (!this.down) return;
    this.down = false;
    this.logger.info({}, `${this.who}: database is back`);
  }
}
