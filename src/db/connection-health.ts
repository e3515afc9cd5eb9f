/**
 * One warning when the database goes away and one line when it is back, however many
 * connections notice in between: an outage is a single event in the log, not one line per
 * pooled connection or per reconnect attempt.
 */
export interface DatabaseLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface ConnectionLog {
  lost(err: Error): void;
  back(): void;
}

export const silentLogger: DatabaseLogger = { warn() {}, info() {} };

export function connectionLog(logger: DatabaseLogger, database: string): ConnectionLog {
  let down = false;
  return {
    lost(err) {
      if (down) return;
      down = true;
      const code = (err as { code?: unknown }).code;
      logger.warn(
        { database, code: typeof code === 'string' ? code : undefined, reason: err.message },
        'database connection lost; requests answer 503 until it is back',
      );
    },
    back() {
      if (!down) return;
      down = false;
      logger.info({ database }, 'database connection is back');
    },
  };
}
