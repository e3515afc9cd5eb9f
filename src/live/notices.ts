/**
 * What channels' notifications report, held against Paygate's rows: a notice applies to a
 * transaction only when it names one of the kind and channel it is about and, for a customer's
 * payment, when the channel reference and the payee UPI id it claims are the pay-in's (CONTRACT
 * §10: a reference alone could be anybody's). Anything else is kept for the operator as naming no
 * transaction here. A payment that names a pay-in still being opened (its QR made at the channel,
 * not yet recorded here) cannot be held against it yet: the notification waits (`StillOpening`).
 */
import { sql, type Kysely } from 'kysely';
import type { NotificationReader, Notice, PaymentNotice } from '../channels/notification-reader.ts';
import { jsonRecords } from '../db/json-records.ts';
import type { Tables, TransactionKind } from '../db/schema.ts';
import { OPENING, type TransactionRow } from '../transactions/transactions.repository.ts';
import type { Untied } from './outcome-exceptions.ts';
import type { Report } from './outcomes.ts';

/**
 * A payment for a pay-in whose channel answer is not recorded yet: neither its QR nor untied (that
 * would put the customer's money in suspense and refund it while a poll credits the same payment).
 * Applying fails, so the notification is kept and applied again later (`NotificationService`).
 */
export class StillOpening extends Error {
  constructor(paymentId: string) {
    super(`a payment names pay-in ${paymentId}, which is still being opened`);
    this.name = 'StillOpening';
  }
}

/** A notification read: what read it, and what it reports. */
export interface Read {
  reader: NotificationReader;
  notice: Notice | null;
}

/**
 * The reports to apply and what names no transaction here, in the notifications' order, given the
 * transactions they name. The UPI ids of the pay-ins' merchants are read in one statement.
 */
export async function heldAgainst(
  db: Kysely<Tables>,
  read: Read[],
  txns: Map<string, TransactionRow>,
): Promise<{ reports: Report[]; untied: Untied[] }> {
  const payins = read.flatMap(({ reader, notice }) =>
    notice?.kind === 'payment' ? [ofKind(txns, 'payin', reader.provider, notice.named)] : [],
  );
  const vpas = await merchantVpas(
    db,
    payins.flatMap((t) => (t ? [t.merchant_id] : [])),
  );
  const reports: Report[] = [];
  const untied: Untied[] = [];
  for (const { reader, notice } of read) {
    const { provider, label } = reader;
    const source = `notification:${provider}`;
    if (notice?.kind === 'payment') {
      const txn = ofKind(txns, 'payin', provider, notice.named);
      if (txn?.status === 'PENDING' && txn.response_json === OPENING) throw new StillOpening(txn.payment_id);
      const mismatch = !txn ? `which names no ${label} pay-in here` : payinMismatch(notice, txn, vpas);
      if (txn && !mismatch) reports.push({ kind: 'payin', txn, outcome: notice.outcome, source });
      else
        untied.push({
          kind: 'unknown_reference',
          provider,
          reference: notice.reference,
          amount: notice.amount,
          detail: `${notice.subject}, ${mismatch}`,
          payment: notice.amount !== null && notice.amount > 0,
          vpa: notice.payeeVpa.slice(0, 200),
        });
    } else if (notice?.kind === 'transfer') {
      const txn = ofKind(txns, 'payout', provider, notice.named);
      if (txn) reports.push({ kind: 'payout', txn, state: notice.state, source });
      else
        untied.push({
          kind: 'unknown_reference',
          provider,
          reference: notice.reference,
          amount: null,
          detail: `${notice.subject}, which names no ${label} payout here`,
        });
    } else if (notice?.kind === 'low_balance') untied.push({ provider, ...notice });
  }
  return { reports, untied };
}

/** Why a payment is not the pay-in's it names: its QR, or the UPI id it was paid to; null when it is. */
function payinMismatch(notice: PaymentNotice, txn: TransactionRow, vpas: Map<string, string>): string | null {
  const qr = notice.channelTxnId;
  const vpa = notice.payeeVpa;
  if (qr === '' || qr !== txn.channel_txn_id) return `whose QR "${qr.slice(0, 64)}" is not that pay-in's`;
  if (vpa === '' || vpa.toLowerCase() !== (vpas.get(txn.merchant_id) ?? '').toLowerCase())
    return `whose UPI id "${vpa.slice(0, 100)}" is not that pay-in's`;
  return null;
}

/** The transaction a notification names, if it is of this kind and channel. */
function ofKind(
  txns: Map<string, TransactionRow>,
  kind: TransactionKind,
  channel: string,
  paymentId: string,
): TransactionRow | undefined {
  const txn = txns.get(paymentId);
  return txn && txn.kind === kind && txn.channel === channel ? txn : undefined;
}

const NAMED_IDS = { named_id: 'text' } as const;

/** The UPI id of each merchant named, in one statement whatever their number. */
async function merchantVpas(db: Kysely<Tables>, merchantIds: string[]): Promise<Map<string, string>> {
  const ids = [...new Set(merchantIds)];
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('merchants')
    .select(['id', 'vpa'])
    .where(
      'id',
      'in',
      sql<string>`(select named_id from ${jsonRecords(
        db,
        ids.map((id) => ({ named_id: id })),
        NAMED_IDS,
      )} as n)`,
    )
    .execute();
  return new Map(rows.map((r) => [r.id, r.vpa]));
}
