/**
 * Delivers the callback outbox (docs/integration.md §5). Runs in every serving process: it claims due
 * deliveries with a lease, sends each outside any database transaction, records the attempt and
 * releases the row, with at most `callbackConcurrency` sends in flight. It is a kind of work of the
 * claim loop (`claim-loop.ts`), with the outbox as its one partition.
 *
 * Promptness: a final status wakes the dispatcher of its own process at once (`wake`, called from
 * `finality.onFinal`); on PostgreSQL a NOTIFY wakes the others when this one cannot take the work
 * right away, and resends from the CLI notify too. After each round the dispatcher sleeps until the
 * next retry is due, and never longer than WORKER_POLL_MS, so polling is only the fallback.
 * While the database is unavailable it looks again every RECOVERY_CHECK_MS at most, and its return
 * (`Database.onAvailable`: a new connection, a restored LISTEN, a write that succeeds) ends every
 * wait at once: the claims, and the records of attempts sent during the outage.
 *
 * Attempts count when they are claimed, so a send that kills its process still counts against
 * the retries. A row is released when its attempt is recorded; a record the database refuses
 * releases the row without its log entry, and one that finds the database down is tried again
 * until it answers. A process that dies mid-send leaves the row leased; once the lease runs out
 * (`timeout + LEASE_MARGIN_MS` after the claim) the next claim records that attempt as failed with
 * the error `interrupted`, sends nothing, and the usual rule follows: a retry an interval later,
 * or `failed` if it was the last attempt. The receiver may have had the cut-off attempt, so
 * callbacks are delivered at least once; receivers deduplicate on payment_id and status.
 */
import type { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Claim } from '../db/claim.ts';
import type { Database } from '../db/database.ts';
import { isUnavailableError } from '../db/errors.ts';
import { RECOVERY_CHECK_MS } from '../db/outage-log.ts';
import { BatchQueue } from '../db/batch-queue.ts';
import type { DeliveryStatus } from '../db/schema.ts';
import { VERSION } from '../version.ts';
import { CallbackSender, type AttemptResult } from '../callbacks/callback.sender.ts';
import { createCallbackMetrics, type CallbackMetrics } from '../callbacks/callbacks.metrics.ts';
import {
  claimDueDeliveries,
  giveBackDeliveries,
  INTERRUPTED,
  nextClaimableAt,
  queueStats,
  recordAttempts,
  releaseDelivery,
  webhookSecrets,
  type AttemptRecord,
  type DeliveryRow,
} from '../callbacks/deliveries.repository.ts';
import { listenForQueued, notifyQueued } from '../callbacks/queue-signal.ts';
import { callbackHeaders, type SigningSecrets } from '../callbacks/standard-webhooks.ts';
import { ClaimLoop, type ClaimWork } from './claim-loop.ts';

export interface DispatcherLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DispatcherOptions {
  registry: Registry;
  logger: DispatcherLogger;
  now?: () => number;
  /** Where callbacks are sent instead of over HTTP (the simulator's receivers). */
  sender?: Pick<CallbackSender, 'send'>;
}

/** Time, beyond the callback timeout, for recording an attempt before its lease runs out. */
const LEASE_MARGIN_MS = 5000;
/** The outbox is claimed as one partition. */
const OUTBOX = 'outbox';

/** A claimed delivery and the secrets that sign it (none when its merchant is gone). */
interface Claimed {
  row: DeliveryRow;
  secret: SigningSecrets | undefined;
}

export class CallbackDispatcher {
  private readonly now: () => number;
  private readonly metrics: CallbackMetrics;
  private readonly leaseMs: number;
  /** Attempts that finish while others are being recorded are recorded together, in one transaction. */
  private readonly recorder: BatchQueue<AttemptRecord, boolean>;
  private readonly loop: ClaimLoop<Claimed>;
  private sender: Pick<CallbackSender, 'send'> | null = null;

  constructor(
    private readonly database: Database,
    private readonly config: Config,
    private readonly options: DispatcherOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.leaseMs = config.callbackTimeoutMs + LEASE_MARGIN_MS;
    this.recorder = new BatchQueue((records) => recordAttempts(this.database.db, records));
    this.metrics = createCallbackMetrics(options.registry, async () => {
      const at = this.now();
      const q = await queueStats(this.database.db, at);
      return {
        pending: q.pending,
        oldestDueAgeSeconds: q.oldestDueAt === null ? 0 : Math.max(0, at - q.oldestDueAt) / 1000,
      };
    });
    this.loop = new ClaimLoop(database, this.work());
    this.sender = options.sender ?? null;
  }

  get running(): boolean {
    return this.loop.running;
  }

  start(): void {
    if (this.loop.running) return;
    this.sender ??= new CallbackSender({
      timeoutMs: this.config.callbackTimeoutMs,
      allowPrivate: this.config.allowPrivateCallbackUrls,
      userAgent: `paygate-callback/${VERSION}`,
    });
    this.loop.start();
  }

  /**
   * Stops claiming, lets the sends in flight finish (each is bounded by the callback timeout) and
   * records them, so nothing is left leased; unless the database is down, and then their leases run
   * out and the next claims record them as interrupted.
   */
  async stop(): Promise<void> {
    if (!this.loop.running) return;
    await this.loop.stop();
    if (this.sender instanceof CallbackSender) {
      await this.sender.close();
      this.sender = null;
    }
  }

  /** Delivers what is due now, once, and waits for the sends: for a caller on its own clock (the simulator). */
  drain(): Promise<number> {
    return this.loop.drain();
  }

  /**
   * A delivery was queued (a final status committed, or a resend). Delivers it from here when this
   * process has room; otherwise, on PostgreSQL, tells the other processes.
   */
  wake(): void {
    if (this.loop.running && this.loop.heldBy(OUTBOX) < this.config.callbackConcurrency) this.loop.wake();
    else this.loop.tellOthers();
  }

  /**
   * The outbox as the claim loop's work: as many due deliveries claimed as there is room for, at
   * most `callbackConcurrency` sends in flight; after a round, a sleep until the next is due.
   */
  private work(): ClaimWork<Claimed> {
    const { database, config } = this;
    return {
      name: 'callback dispatcher',
      logger: this.options.logger,
      now: this.now,
      pollMs: config.workerPollMs,
      leaseMs: this.leaseMs,
      signal: {
        listen: (onSignal) => listenForQueued(database, onSignal),
        notify: () => notifyQueued(database),
      },
      gatherMs: 0,
      messages: {
        claim: 'claiming callback deliveries failed',
        giveBack: 'claiming callback deliveries failed',
        notify: 'callback queue notify failed',
      },
      partitions: async () => [OUTBOX],
      room: (held) => config.callbackConcurrency - held,
      // Under load, claim in batches: wait until a quarter of the slots is free rather than
      // paying a claim query for every finished send. Below that level every send claims again.
      refill: (room) => room >= Math.max(1, Math.floor(config.callbackConcurrency / 4)),
      claim: (_outbox, room, claim) => this.claim(room, claim),
      giveBack: (lost) => giveBackDeliveries(database, lost),
      key: (c) => c.row.id,
      leaseUntil: (c) => c.row.lease_until,
      handle: (c) =>
        this.deliver(c.row, c.secret).catch((err: unknown) => {
          // The lease runs out and the next claim records the attempt as interrupted.
          this.loop.outage.failed(err, 'recording a callback attempt failed', {
            delivery_id: c.row.id,
            payment_id: c.row.payment_id,
          });
        }),
      nextDue: () => nextClaimableAt(database.db),
    };
  }

  /**
   * Claims up to `room` due deliveries, with their merchants' secrets. A failure loses the claim:
   * nothing of it was sent, and its rows, if it took any, are given back when the database is.
   */
  private async claim(room: number, claim: Claim): Promise<Claimed[]> {
    const rows = await claimDueDeliveries(this.database, claim.now, this.leaseMs, room, claim.owner);
    const secrets = await webhookSecrets(this.database.db, [...new Set(rows.map((r) => r.merchant_id))]);
    return rows.map((row) => ({ row, secret: secrets.get(row.merchant_id) }));
  }

  private async deliver(row: DeliveryRow, secret: SigningSecrets | undefined): Promise<void> {
    // The claim counted this attempt: its number is the row's count.
    const attemptNo = row.attempts;
    // Claimed again after its lease ran out: attempt `attemptNo` was cut off by its process
    // stopping, and this claim records it instead of sending.
    const interrupted = row.last_error === INTERRUPTED;
    let startedAt = this.now();
    let result: AttemptResult;
    if (interrupted) {
      // When it started is not known; it was due at `next_attempt_at` and started soon after.
      startedAt = row.next_attempt_at ?? startedAt;
      result = { delivered: false, httpStatus: null, errorKind: INTERRUPTED, latencyMs: 0, snippet: null };
    } else if (secret === undefined || !this.sender) {
      result = { delivered: false, httpStatus: null, errorKind: 'error', latencyMs: 0, snippet: null };
    } else {
      const headers = callbackHeaders(secret, {
        eventId: row.event_id,
        body: row.body,
        attemptNo,
        at: startedAt,
      });
      result = await this.sender.send(row.url, row.body, headers);
    }
    const at = this.now();
    // Blocked targets are retried on the same schedule as any other failure rather than failed at
    // once: a hostname's records can change (a merchant fixing a DNS mistake), the attempt log then
    // shows every refusal, and merchants see one rule: 1 + CALLBACK_MAX_RETRIES attempts.
    let status: DeliveryStatus = 'pending';
    let nextAttemptAt: number | null = at + this.config.callbackRetryIntervalMs;
    if (result.delivered) [status, nextAttemptAt] = ['delivered', null];
    else if (attemptNo >= row.max_attempts) [status, nextAttemptAt] = ['failed', null];

    const updated = await this.settle({
      deliveryId: row.id,
      claimedAttempts: row.attempts,
      claimedLease: row.lease_until ?? 0,
      startedAt,
      latencyMs: result.latencyMs,
      httpStatus: result.httpStatus,
      errorKind: result.errorKind,
      snippet: result.snippet,
      status,
      nextAttemptAt,
      at,
    });
    const label = result.errorKind ?? 'delivered';
    this.metrics.attempts.inc({ result: label });
    if (!interrupted) this.metrics.latency.observe({ result: label }, result.latencyMs / 1000);
    if (!updated) {
      this.options.logger.warn(
        { delivery_id: row.id, payment_id: row.payment_id },
        'callback lease ran out before the attempt was recorded',
      );
      return;
    }
    if (status !== 'pending') this.metrics.deliveries.inc({ outcome: status });
    const log = {
      delivery_id: row.id,
      payment_id: row.payment_id,
      attempt: attemptNo,
      error: result.errorKind,
      http_status: result.httpStatus,
    };
    if (status === 'failed') this.options.logger.warn(log, 'callback failed after its last attempt');
    else if (status === 'pending') this.options.logger.info(log, 'callback attempt failed; will retry');
  }

  /**
   * Records an attempt and releases its row, rather than leaving the row to its lease when the
   * record fails: a record the database refuses (not for being down) moves the delivery on without
   * its log entry; while the database is down the record is tried again when it is back (or every
   * RECOVERY_CHECK_MS at most) until it answers or the dispatcher stops. Every write is conditional
   * on the claim's count and lease, so a row another process has claimed since is never overwritten.
   */
  private async settle(record: AttemptRecord): Promise<boolean> {
    let withLog = true;
    for (;;) {
      try {
        return withLog ? await this.recorder.submit(record) : await releaseDelivery(this.database.db, record);
      } catch (err) {
        const down = isUnavailableError(err);
        if (!down && withLog) {
          this.options.logger.error(
            { err, delivery_id: record.deliveryId, attempt: record.claimedAttempts },
            'the database refused a callback attempt record; releasing the delivery without it',
          );
          withLog = false;
          continue;
        }
        if (!down || !this.loop.running) throw err;
        this.loop.outage.failed(err, 'recording a callback attempt failed', {
          delivery_id: record.deliveryId,
        });
        await this.loop.untilBack(Math.min(this.config.workerPollMs, RECOVERY_CHECK_MS));
      }
    }
  }
}
