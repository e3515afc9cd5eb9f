/**
 * Whether the store answers, as one process sees it. One warning when it goes away and one line
 * when it is back, however many connections or loops notice in between: an outage is a single
 * event in the log, not one line per pooled connection or per reconnect attempt. Its return is
 * also a signal: the background loops subscribe (`onBack`) and resume at once, instead of waiting
 * out a back-off or a poll that began during the outage.
 */
export interface DatabaseLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface ConnectionLog {
  /** The store could not be used (a lost connection, a refused write). Logged on the first. */
  lost(err: Error): void;
  /** The store answered (a new connection, a write that succeeded). Signals once per outage. */
  back(): void;
  /** Calls `listener` each time the store is back after it was lost; returns the unsubscribe. */
  onBack(listener: () => void): () => void;
}

export const silentLogger: DatabaseLogger = { warn() {}, info() {} };

export function connectionLog(logger: DatabaseLogger, database: string): ConnectionLog {
  let down = false;
  const listeners = new Set<() => void>();
  return {
    lost(err) {
      if (down) return;
      down = true;
      const code = (err as { code?: unknown }).code;
      logger.warn(
        { database, code: typeof code === 'string' ? code : undefined, reason: err.message },
        'database unavailable; requests that need it answer 503 until it is back',
      );
    },
    back() {
      if (!down) return;
      down = false;
      logger.info({ database }, 'database is back');
      for (const listener of [...listeners]) listener();
    },
    onBack(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
