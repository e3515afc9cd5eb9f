/**
 * For a loop that polls the database: a failure because the database is unavailable is logged
 * once, when it starts, and its end once; any other failure is an error every time. The
 * unavailability is also reported to the database (`report`), whose return then wakes the loop.
 */
import { isUnavailableError } from './errors.ts';

export interface OutageLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * While the store is unavailable, a loop looks again at least this often, whatever its poll
 * interval: the return is signalled (`Database.onAvailable`) only when something uses the store,
 * and on SQLite nothing else may write.
 */
export const RECOVERY_CHECK_MS = 1000;

export class OutageLog {
  private unavailable = false;

  constructor(
    private readonly logger: OutageLogger,
    private readonly who: string,
    private readonly report: (err: unknown) => void = () => {},
  ) {}

  /** Whether the last failure found the database unavailable and nothing has succeeded since. */
  get down(): boolean {
    return this.unavailable;
  }

  failed(err: unknown, msg: string, context: object = {}): void {
    if (!isUnavailableError(err)) {
      this.logger.error({ err, ...context }, msg);
      return;
    }
    this.report(err);
    if (this.unavailable) return;
    this.unavailable = true;
    this.logger.warn(
      { code: (err as { code?: unknown }).code, reason: (err as Error).message },
      `${this.who}: database unavailable; looking again when it is back`,
    );
  }

  ok(): void {
    if (!this.unavailable) return;
    this.unavailable = false;
    this.logger.info({}, `${this.who}: database is back`);
  }
}
