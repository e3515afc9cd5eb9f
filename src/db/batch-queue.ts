/**
 * A queue that hands its items over in batches: items that arrive while a batch is being written
 * (or read) wait for it to finish and then go together in the next, in one database transaction
 * or one query. This is group commit in the application. Nothing waits on a timer:
 * a lone request is written at once, and under load each transaction carries everything that
 * queued during the previous one. One commit then serves many requests, which is what a hot row
 * (one merchant's wallet) needs: on PostgreSQL its lock is held once per batch, not once per payout.
 *
 * A batch whose write fails is written again one item at a time, so that an item that cannot be
 * written fails alone instead of taking its neighbours with it; unless the failure is the store's
 * (unreachable, overloaded, busy), which no item causes: then every item fails at once, instead of
 * each waiting out the connection or busy timeout again while the items behind it queue.
 */
import { isUnavailableError } from './errors.ts';

export type BatchWrite<I, O> = (items: I[]) => Promise<O[]>;

interface Waiting<I, O> {
  item: I;
  resolve(value: O): void;
  reject(reason: unknown): void;
}

export class BatchQueue<I, O> {
  private queue: Waiting<I, O>[] = [];
  private busy = false;
  private scheduled = false;

  /**
   * @param write writes the items in one transaction (or reads them in one query) and returns one
   *   result per item, in order.
   * @param maxBatch the most items in one transaction (bounded by the statements' parameter limits).
   * @param splitOnFailure whether a failed batch is tried again item by item (reads that no item
   *   can make fail pass `() => false`).
   */
  constructor(
    private readonly write: BatchWrite<I, O>,
    private readonly maxBatch = 100,
    private readonly splitOnFailure: (err: unknown) => boolean = (err) => !isUnavailableError(err),
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      // The batch starts after the event loop has read every request that is ready: with a
      // synchronous driver (better-sqlite3) a write never yields, so without this every batch
      // would hold a single item.
      if (!this.busy && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.next();
        });
      }
    });
  }

  private next(): void {
    if (this.busy || this.queue.length === 0) return;
    this.busy = true;
    const batch = this.queue.splice(0, this.maxBatch);
    this.run(batch).finally(() => {
      this.busy = false;
      this.next();
    });
  }

  private async run(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const results = await this.write(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(results[i] as O));
      return;
    } catch (err) {
      if (batch.length === 1 || !this.splitOnFailure(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
    }
    for (const w of batch) {
      try {
        const [result] = await this.write([w.item]);
        w.resolve(result as O);
      } catch (err) {
        w.reject(err);
      }
    }
  }
}
