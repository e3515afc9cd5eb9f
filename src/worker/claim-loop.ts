/**
 * The one loop behind every kind of background work (graphile-worker's single runner, with kinds in
 * place of its task names): it claims due rows with a lease, hands each to its kind's step outside
 * any database transaction, and keeps them in hand until the step is over. What differs between
 * kinds is a `ClaimWork`: how rows are claimed and given back, how much room there is, what a step
 * does, when the next row is due, what follows a round, and which signal wakes the loops of the
 * other processes.
 *
 * A round gives back what an outage left, then claims each partition's due rows (one channel's
 * transactions, say) up to the room it has: a backlog in one partition never holds back another.
 * Rows still in hand stay with their steps; a step that ends makes room, and a partition that had
 * more due than room is claimed again as soon as it has room. After a round the loop sleeps until
 * the next row is due, and never longer than the poll interval, so polling is only the fallback.
 *
 * Promptness: `wake` starts a round at once, or right after the running one; while rows are in hand
 * the wake-ups within `gatherMs` share one round. The signal of another process (LISTEN/NOTIFY on
 * PostgreSQL) wakes it too. While the database is unavailable it looks again every
 * RECOVERY_CHECK_MS at most, and the database's return (`Database.onAvailable`) wakes it at once
 * and ends every `untilBack` wait. A claim whose answer was lost for the outage is given back then
 * (`LostClaims`), instead of leaving its rows leased to nobody until the lease runs out.
 */
import { LostClaims, type Claim } from '../db/claim.ts';
import type { Database } from '../db/database.ts';
import { OutageLog, RECOVERY_CHECK_MS, type OutageLogger } from '../db/outage-log.ts';

/** The shortest sleep between rounds, so that a row that looks due but cannot be claimed never spins. */
const MIN_SLEEP_MS = 20;

/** What tells the loops of the other processes that work is waiting, and hears them. */
export interface WorkSignal {
  /** Calls `onSignal` when any process signals, and after every reconnect; null where nobody else listens. */
  listen(onSignal: () => void): { stop(): Promise<void> } | null;
  notify(): Promise<void>;
}

/** One kind of background work: what the claim loop needs to know of it. */
export interface ClaimWork<Row> {
  /** Names the loop in its log lines ("… : database unavailable; looking again when it is back"). */
  name: string;
  logger: OutageLogger;
  now: () => number;
  /** The longest sleep between rounds. */
  pollMs: number;
  /** How long a claimed row is this process's. */
  leaseMs: number;
  signal: WorkSignal;
  /** How long a wake-up that comes while rows are in hand waits, so that the wake-ups of a busy gateway share one round. */
  gatherMs: number;
  /** The log lines of failures: a claim (or the next due time), a give-back, a notification. */
  messages: { claim: string; giveBack: string; notify: string };
  /** The partitions a round claims, each on its own. */
  partitions(): Promise<readonly string[]>;
  /** How many rows of a partition may be claimed now, with `held` of its rows in hand (0: none). */
  room(held: number): number;
  /**
   * Whether a step that ended, leaving a partition `room`, is reason to claim again now; `more`: the
   * partition's last claim filled its room, or it had none.
   */
  refill(room: number, more: boolean): boolean;
  /** The rows a claim of `partition` takes (`Claim.only`), so that a lost claim is given back for them alone. */
  only?(partition: string): Claim['only'];
  /**
   * Claims up to `room` of `partition`'s due rows for `claim`. `expired`: keys of its rows still in
   * hand whose lease has run out (their steps may still be reading or sending them).
   */
  claim(partition: string, room: number, claim: Claim, expired: string[]): Promise<Row[]>;
  /** Gives back the rows of a claim whose answer was lost. */
  giveBack(claim: Claim): Promise<void>;
  /** Gives back rows whose steps ended while the database was down; before any lost claim. */
  giveBackHeld?(): Promise<void>;
  key(row: Row): string;
  leaseUntil(row: Row): number | null;
  /** The step for one row: it reports its own failures and never rejects. */
  handle(row: Row): Promise<void>;
  /** Runs after a round, unless the round left every partition full (a step that ends claims again). */
  afterRound?(): Promise<void>;
  /** When the next row falls due (null: nothing is waiting); the loop sleeps until then. */
  nextDue?(): Promise<number | null>;
}

interface InHand {
  key: string;
  partition: string;
  leaseUntil: number | null;
  done: Promise<void>;
}

/** The claim loop of one kind of work (`ClaimWork`): started and stopped with its process. */
export class ClaimLoop<Row> {
  /** Failures of the loop and of its steps: an outage is logged once, at its start, and once at its end. */
  readonly outage: OutageLog;
  private readonly lostClaims = new LostClaims();
  private readonly inHand = new Set<InHand>();
  private readonly held = new Map<string, number>();
  /** The partitions whose last claim filled their room, or that had none. */
  private readonly more = new Set<string>();
  private stopped = true;
  private round: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private gathering: NodeJS.Timeout | null = null;
  private listener: { stop(): Promise<void> } | null = null;
  private unsubscribe: (() => void) | null = null;
  /** Waits for the database to be back (`untilBack`); each is called once, when it is. */
  private readonly waitingForStore = new Set<() => void>();
  /** Aborted by stop(), to end the `untilBack` waits. */
  private stopping = new AbortController();

  constructor(
    private readonly database: Pick<Database, 'onAvailable' | 'unavailable'>,
    private readonly work: ClaimWork<Row>,
  ) {
    this.outage = new OutageLog(work.logger, work.name, (err) => database.unavailable(err));
  }

  get running(): boolean {
    return !this.stopped;
  }

  /** How many of `partition`'s rows are in hand. */
  heldBy(partition: string): number {
    return this.held.get(partition) ?? 0;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.stopping = new AbortController();
    this.listener = this.work.signal.listen(() => this.wake());
    this.unsubscribe = this.database.onAvailable(() => this.back());
    this.wake();
  }

  /** Stops claiming, and waits for the running round and for every step in hand to end. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stopping.abort();
    for (const timer of [this.timer, this.gathering]) if (timer) clearTimeout(timer);
    this.timer = this.gathering = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.listener?.stop();
    this.listener = null;
    await this.round;
    await Promise.allSettled([...this.inHand].map((r) => r.done));
  }

  /** Looks for due work now, or right after the running round (see `gatherMs`). */
  wake(): void {
    if (this.stopped) return;
    if (this.round) {
      this.again = true;
      return;
    }
    if (this.inHand.size === 0 || this.work.gatherMs <= 0) {
      this.look();
      return;
    }
    if (this.gathering) return;
    this.gathering = setTimeout(() => {
      this.gathering = null;
      this.look();
    }, this.work.gatherMs);
    this.gathering.unref();
  }

  /** Looks for due work at `at` (now, when it has passed). */
  wakeAt(at: number): void {
    if (this.stopped) return;
    const now = this.work.now();
    if (at > now) setTimeout(() => this.wake(), at - now + 5).unref();
    else this.wake();
  }

  /** Tells the loops of the other processes that work is waiting (this one does not take it now). */
  tellOthers(): void {
    this.work.signal.notify().catch((err: unknown) => this.outage.failed(err, this.work.messages.notify));
  }

  /** Resolves after `ms`, when the database is back, or when the loop stops, whichever is first. */
  untilBack(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const resume = () => {
        clearTimeout(timer);
        this.waitingForStore.delete(resume);
        this.stopping.signal.removeEventListener('abort', resume);
        resolve();
      };
      const timer = setTimeout(resume, ms);
      this.waitingForStore.add(resume);
      this.stopping.signal.addEventListener('abort', resume);
    });
  }

  /**
   * One round, as a wake-up starts it, and the end of every step in hand: for a caller on its own
   * clock (a test). On a loop that is not running, the round claims every partition once. Returns
   * how many rows it claimed.
   */
  async drain(): Promise<number> {
    const claimed = await this.claimRound();
    await Promise.allSettled([...this.inHand].map((r) => r.done));
    return claimed;
  }

  /** Starts a round now, or right after the running one. */
  private look(): void {
    if (this.stopped) return;
    if (this.round) {
      this.again = true;
      return;
    }
    if (this.gathering) clearTimeout(this.gathering);
    this.gathering = null;
    this.round = this.claimRound()
      .then(
        () => undefined,
        (err: unknown) => {
          this.outage.failed(err, this.work.messages.claim);
          this.recheck();
        },
      )
      .finally(() => {
        this.round = null;
        if (this.again && !this.stopped) {
          this.again = false;
          this.look();
        }
      });
  }

  /** The database answers again: what waited for it goes now. */
  private back(): void {
    for (const resume of [...this.waitingForStore]) resume();
    this.wake();
  }

  /**
   * Gives back what an outage left and claims each partition's due rows, as many as it has room
   * for; then, unless every partition is full (a step that ends claims again), runs `afterRound`
   * and sleeps until the next row is due. Returns how many rows it claimed.
   */
  private async claimRound(): Promise<number> {
    // A round of a loop that is not running (a test's own clock) claims every partition once.
    const stopping = this.stopped ? () => false : () => this.stopped;
    const partitions = await this.work.partitions();
    if (!(await this.giveBack())) return 0;
    let claimed = 0;
    for (const partition of partitions) {
      if (stopping()) return claimed;
      const rows = await this.claim(partition);
      if (rows === null) {
        this.recheck();
        return claimed;
      }
      claimed += rows;
    }
    if (stopping()) return claimed;
    if (partitions.length > 0 && partitions.every((p) => this.work.room(this.heldBy(p)) <= 0)) return claimed;
    await this.work.afterRound?.();
    // Another round follows at once (something was signalled meanwhile); it will set the timer.
    if (this.again) return claimed;
    try {
      this.sleep(await this.nextWait());
    } catch (err) {
      this.outage.failed(err, this.work.messages.claim);
      this.recheck();
    }
    return claimed;
  }

  /** Gives back the rows held since an outage, then the lost claims; false when the database failed again (reported). */
  private async giveBack(): Promise<boolean> {
    try {
      await this.work.giveBackHeld?.();
      await this.lostClaims.giveBack(this.work.now(), (lost) => this.work.giveBack(lost));
      return true;
    } catch (err) {
      this.outage.failed(err, this.work.messages.giveBack);
      this.recheck();
      return false;
    }
  }

  /** Claims up to the room `partition` has and starts a step for each row: how many; null when the database failed (reported). */
  private async claim(partition: string): Promise<number | null> {
    const room = this.work.room(this.heldBy(partition));
    if (room <= 0) {
      this.more.add(partition);
      return 0;
    }
    let claim: Claim | null = null;
    let rows: Row[];
    try {
      claim = { ...LostClaims.start(this.work.now(), this.work.leaseMs), only: this.work.only?.(partition) };
      rows = await this.work.claim(partition, room, claim, this.expired(partition, claim.now));
      this.outage.ok();
    } catch (err) {
      if (claim) this.lostClaims.failed(claim, err);
      // Tried again when the database is back, or after RECOVERY_CHECK_MS: it is not hammered.
      this.outage.failed(err, this.work.messages.claim);
      return null;
    }
    if (rows.length === room) this.more.add(partition);
    else this.more.delete(partition);
    for (const row of rows) this.launch(row, partition);
    return rows.length;
  }

  /**
   * The keys of `partition`'s rows in hand whose lease has run out by `now`: a row whose lease still
   * runs is not due, and one in hand is not claimed again here, its step may still be reading or sending it.
   */
  private expired(partition: string, now: number): string[] {
    const keys: string[] = [];
    for (const r of this.inHand) if (r.partition === partition && (r.leaseUntil ?? 0) < now) keys.push(r.key);
    return keys;
  }

  private launch(row: Row, partition: string): void {
    const entry: InHand = {
      key: this.work.key(row),
      partition,
      leaseUntil: this.work.leaseUntil(row),
      done: this.work.handle(row).finally(() => this.ended(entry)),
    };
    this.inHand.add(entry);
    this.held.set(partition, this.heldBy(partition) + 1);
  }

  /** A step ended: its partition may claim again, and a loop left with nothing in hand while the database is down looks again soon. */
  private ended(entry: InHand): void {
    this.inHand.delete(entry);
    const held = this.heldBy(entry.partition) - 1;
    if (held > 0) this.held.set(entry.partition, held);
    else this.held.delete(entry.partition);
    if (this.inHand.size === 0 && this.outage.down) this.sleep(this.recoveryMs, true);
    if (this.work.refill(this.work.room(held), this.more.has(entry.partition))) {
      this.more.delete(entry.partition);
      this.look();
    }
  }

  /** How long to sleep after a round: until the next row is due, at most a poll interval. */
  private async nextWait(): Promise<number> {
    if (this.outage.down) return this.recoveryMs;
    const next = (await this.work.nextDue?.()) ?? null;
    return next === null ? this.work.pollMs : Math.min(this.work.pollMs, next - this.work.now());
  }

  private get recoveryMs(): number {
    return Math.min(this.work.pollMs, RECOVERY_CHECK_MS);
  }

  /** After a failure: the database's return wakes the loop; this is for a return nobody else notices. */
  private recheck(): void {
    this.sleep(this.outage.down ? this.recoveryMs : this.work.pollMs);
  }

  /** Starts a round after `ms`, instead of the one planned (or only when sooner than it, `sooner`). */
  private sleep(ms: number, sooner = false): void {
    if (this.stopped) return;
    const wait = Math.max(MIN_SLEEP_MS, ms);
    const at = Date.now() + wait;
    if (sooner && this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.look();
    }, wait);
    this.timer.unref();
  }
}
