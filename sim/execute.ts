/**
 * Runs one command against the world: the merchants' requests through the real services, the
 * customers' payments and the banks' outcomes at the simulated providers, notifications through
 * the real NotificationService, and the worker's and dispatcher's rounds. Answers the history's line.
 */
import { AppError } from '../src/errors.ts';
import { istDate } from '../src/ist.ts';
import { toRupees } from '../src/money.ts';
import type { Command } from './commands.ts';
import type { World } from './world.ts';

export interface Txn {
  paymentId: string;
  merchant: number;
  amount: number;
}

/** What the commands made, in order: what indices in commands pick from. */
export class Made {
  readonly payins: Txn[] = [];
  readonly payouts: Txn[] = [];
  readonly refunds: (Txn & { of: string })[] = [];
  /** Provider payments whose notification Paygate answered (accepted), by Setu payment id. */
  readonly notified = new Set<string>();
  /** Notifications Paygate took (answered), by their raw text; a second one of them must be a duplicate. */
  readonly received = new Set<string>();
  /** A notification taken again and applied as new, if any. */
  reapplied: string | null = null;
  private serial = 0;

  orderNo(prefix: string): string {
    return `${prefix}-${++this.serial}`;
  }
}

function idOf(body: unknown, field: 'payment_id' | 'refund_id'): string {
  const b = (typeof body === 'string' ? JSON.parse(body) : body) as Record<string, unknown>;
  const data = (b.data ?? {}) as Record<string, unknown>;
  return String(b[field] ?? data[field] ?? '');
}

/** The end of an id: a refund_id begins with its pay-in's payment_id, so its end tells refunds apart. */
export const short = (id: string) => id.slice(-6);

/**
 * The `i`-th of `txns` (modulo), most often among those whose status is `status`: customers pay
 * open pay-ins and merchants refund paid ones, and sometimes the others.
 */
async function choose(w: World, txns: Txn[], i: number, status: string): Promise<Txn | null> {
  if (txns.length === 0) return null;
  if (!w.faults.chance(0.8)) return txns[i % txns.length]!;
  const rows = await w.database.db
    .selectFrom('transactions')
    .select('payment_id')
    .where('status', '=', status as 'SUCCESS')
    .execute();
  const ids = new Set(rows.map((r) => r.payment_id));
  const within = txns.filter((t) => ids.has(t.paymentId));
  return within.length ? within[i % within.length]! : txns[i % txns.length]!;
}

/** Runs `cmd`; an AppError (a refusal a merchant would see) is part of the history, not a failure. */
export async function execute(w: World, made: Made, cmd: Command): Promise<string> {
  if ('f' in cmd) w.faults.use(cmd.f);
  try {
    return await run(w, made, cmd);
  } catch (err) {
    if (err instanceof AppError) return `refused ${err.errorCode}`;
    throw err;
  }
}

async function run(w: World, made: Made, cmd: Command): Promise<string> {
  const s = w.services;
  switch (cmd.c) {
    case 'payin': {
      const m = w.merchants[cmd.m % w.merchants.length]!;
      const created = await s.payins.create(m.principal, cmd.flow, {
        money: { amount: toRupees(cmd.amount), currency: 'INR' },
        merchant_order_no: made.orderNo('in'),
      });
      const paymentId = idOf(created.body, 'payment_id');
      made.payins.push({ paymentId, merchant: cmd.m % w.merchants.length, amount: cmd.amount });
      return `payin ${m.live ? 'live' : 'sandbox'} ${cmd.amount} → ${short(paymentId)}`;
    }
    case 'pay':
      return pay(w, made, cmd);
    case 'payout': {
      const m = w.merchants[cmd.m % w.merchants.length]!;
      const created = await s.payouts.create(m.principal, {
        money: { amount: toRupees(cmd.amount), currency: 'INR' },
        merchant_order_no: made.orderNo('out'),
        receiver: { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' },
      });
      const paymentId = idOf(created.body, 'payment_id');
      made.payouts.push({ paymentId, merchant: cmd.m % w.merchants.length, amount: cmd.amount });
      return `payout ${m.live ? 'live' : 'sandbox'} ${cmd.amount} → ${short(paymentId)}`;
    }
    case 'bank': {
      const transfers = [...w.cashfree.transfers.values()];
      if (transfers.length === 0) return 'bank: no transfer';
      const t = transfers[cmd.i % transfers.length]!;
      return `bank ${t.transfer_id.slice(0, 6)} ${cmd.status}: ${w.cashfree.settle(t, cmd.status) ? 'done' : 'no change'}`;
    }
    case 'refund':
      return refund(w, made, cmd);
    case 'refundBank': {
      // `late`: the bank pays a refund it reported failed (a SUCCESS after FAILED).
      const from = cmd.status === 'late' ? 'failed' : 'pending';
      const chosen = w.setu.refundList.filter((r) => r.status === from);
      if (chosen.length === 0) return `refund bank: none ${from}`;
      const r = chosen[cmd.i % chosen.length]!;
      w.setu.settleRefund(r, cmd.status === 'late' ? 'success' : cmd.status);
      return `refund bank ${r.id} ${cmd.status}`;
    }
    case 'notice':
      return notice(w, made, cmd);
    case 'worker': {
      const claimed = await w.worker.drain();
      return `worker round: ${claimed} claimed`;
    }
    case 'callbacks': {
      w.receivers.up = cmd.up;
      const claimed = await w.dispatcher.drain();
      return `callbacks (${cmd.up ? 'up' : 'down'}): ${claimed} claimed`;
    }
    case 'clock':
      w.clock.t += cmd.ms;
      return `clock +${cmd.ms}`;
    case 'crash':
      return crash(w, cmd.f);
    case 'reconcile': {
      const r = await w.reconcile.run(istDate(w.now()), cmd.channel, 'cli');
      return `reconcile ${cmd.channel} ${r.date}: checked ${r.checked} matched ${r.matched} mismatched ${r.mismatched} unreadable ${r.unreadable}`;
    }
    case 'resolve':
      return resolve(w, cmd);
  }
}

/** An operator resolves an open exception; what it moved into or out of a merchant's balance is kept for §13. */
async function resolve(w: World, cmd: Extract<Command, { c: 'resolve' }>): Promise<string> {
  const db = w.database.db;
  const open = await db
    .selectFrom('channel_exceptions')
    .select(['id', 'kind', 'outstanding', 'merchant_id'])
    .where('resolved_at', 'is', null)
    .orderBy('id')
    .execute();
  if (open.length === 0) return 'resolve: no open exception';
  const e = open[cmd.i % open.length]!;
  const live = w.merchants.find((m) => m.live)!;
  const merchantId = cmd.action === 'credit' ? (e.merchant_id ?? live.id) : null;
  const done = await w.services.exceptions.resolve(e.id, {
    action: cmd.action,
    merchantId,
    note: 'simulated operator',
    actor: 'sim',
  });
  const moved = e.outstanding - done.exception.outstanding;
  if (cmd.action === 'credit' && moved > 0 && merchantId)
    w.credited.set(merchantId, (w.credited.get(merchantId) ?? 0) + moved);
  if (cmd.action === 'debit' && moved > 0 && e.merchant_id) {
    const before = w.debitedOn.get(e.id)?.amount ?? 0;
    w.debitedOn.set(e.id, { merchantId: e.merchant_id, amount: before + moved });
  }
  return `resolve ${e.kind} #${e.id} ${cmd.action}: ${done.message}`;
}

async function pay(w: World, made: Made, cmd: Extract<Command, { c: 'pay' }>): Promise<string> {
  const p = await choose(w, made.payins, cmd.i, 'PENDING');
  if (!p) return 'pay: no pay-in';
  const m = w.merchants[p.merchant]!;
  if (!m.live) {
    const status = cmd.how === 'fail' ? 'FAILED' : 'SUCCESS';
    const done = await w.services.sandbox.complete(m.principal, 'payin', p.paymentId, status);
    return `sandbox pay ${short(p.paymentId)} ${status} → ${done.status}`;
  }
  const qr = w.setu.qrOf(p.paymentId);
  if (!qr) return `pay ${short(p.paymentId)}: no QR`;
  if (cmd.how === 'fail') return `pay ${short(p.paymentId)}: the customer gave up`;
  const amount = cmd.how === 'other' ? p.amount + 1 : p.amount;
  const first = w.setu.pay(qr, amount, cmd.how === 'late');
  if (cmd.how === 'twice' && first) w.setu.pay(qr, amount, true);
  return `pay ${short(p.paymentId)} ${cmd.how} ${amount}: ${first ? first.id : 'refused, QR closed'}`;
}

async function refund(w: World, made: Made, cmd: Extract<Command, { c: 'refund' }>): Promise<string> {
  const p = await choose(w, made.payins, cmd.i, 'SUCCESS');
  if (!p) return 'refund: no pay-in';
  const m = w.merchants[p.merchant]!;
  const amount = await refundAmount(w, p, cmd.part);
  const one = async () => {
    const created = await w.services.refunds.create(m.principal, {
      payment_id: p.paymentId,
      money: { amount: toRupees(amount), currency: 'INR' },
      merchant_refund_no: made.orderNo('rf'),
    });
    const refundId = idOf(created.body, 'refund_id');
    made.refunds.push({ paymentId: refundId, merchant: p.merchant, amount, of: p.paymentId });
    return short(refundId);
  };
  // Two at once: the concurrent refunds of one pay-in never refund more than it.
  const results = await Promise.allSettled(cmd.twice ? [one(), one()] : [one()]);
  const words = results.map((r) => {
    if (r.status === 'fulfilled') return r.value;
    if (r.reason instanceof AppError) return `refused ${r.reason.errorCode}`;
    throw r.reason;
  });
  return `refund ${short(p.paymentId)} ${amount}: ${words.join(', ')}`;
}

/** What a refund of `part` asks: `rest` what is left to refund, `over` one paisa more than that. */
async function refundAmount(
  w: World,
  p: Txn,
  part: Extract<Command, { c: 'refund' }>['part'],
): Promise<number> {
  if (part === 'full') return p.amount;
  if (part === 'half') return Math.max(1, Math.floor(p.amount / 2));
  if (part === 'paisa') return 1;
  const refunds = await w.database.db
    .selectFrom('transactions')
    .select('amount')
    .where('refund_of', '=', p.paymentId)
    .where('status', '<>', 'FAILED')
    .execute();
  const left = p.amount - refunds.reduce((sum, r) => sum + Number(r.amount), 0);
  return Math.max(1, part === 'rest' ? left : left + 1);
}

async function notice(w: World, made: Made, cmd: Extract<Command, { c: 'notice' }>): Promise<string> {
  const n = w.notices.take(cmd.i, cmd.mode === 'dup');
  if (!n) return 'notice: none pending';
  if (cmd.mode === 'drop') return `notice dropped: ${n.label}`;
  const headers = { ...n.headers };
  if (cmd.mode === 'forge') {
    const key = n.provider === 'setu' ? 'x-setu-signature' : 'x-webhook-signature';
    headers[key] = Buffer.from('forged').toString('base64');
    // A forged one is sent again, rightly signed, later: the queue keeps it.
    w.notices.push(n);
  }
  try {
    const r = await w.services.notifications.receive(n.provider, Buffer.from(n.raw), headers, 'sim');
    if (cmd.mode !== 'forge') {
      if (made.received.has(n.raw) && !r.duplicate)
        made.reapplied ??= `notification applied twice: ${n.label}`;
      made.received.add(n.raw);
    }
    const body = JSON.parse(n.raw) as Record<string, unknown>;
    if (n.provider === 'setu' && body.eventType === 'payment.success') made.notified.add(String(body.id));
    return `notice ${cmd.mode}: ${n.label} → ${r.duplicate ? 'duplicate' : 'new'}`;
  } catch (err) {
    if (err instanceof AppError) return `notice ${cmd.mode}: ${n.label} → ${err.errorCode}`;
    throw err;
  }
}

async function crash(w: World, f: number): Promise<string> {
  // In flight when the process dies: a worker round and a callback round, cut off after a number
  // of turns of the event loop that the command's seed picks (at any await of theirs).
  const generation = w.generation;
  void w.worker.drain().catch(() => {});
  void w.dispatcher.drain().catch(() => {});
  const turns = f % 40;
  for (let t = 0; t < turns; t++) await new Promise((resolve) => setImmediate(resolve));
  await w.crash();
  return `crash after ${turns} turns (generation ${generation} abandoned)`;
}
