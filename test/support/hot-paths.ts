/**
 * The statements on the gateway's hot paths, each named, with the index it must go through on both
 * databases whatever their statistics. Each entry calls the repository function that issues the
 * statement, so the statement checked is the one the application sends. To add a hot path (a new
 * feature's lookups), add an entry: `test/db/query-plans.test.ts` and `npm run bench -- --only plans`
 * check every entry.
 */
import type { Kysely } from 'kysely';
import type { Database, DatabaseKind } from '../../src/db/database.ts';
import type { Tables } from '../../src/db/schema.ts';
import type { StatusReader } from '../../src/db/status-reads.ts';
import { findKeyOwner } from '../../src/merchants/merchants.repository.ts';
import {
  claimDueTransactions,
  rescheduleMany,
  markProcessing,
  reschedule,
} from '../../src/transactions/transaction-claims.repository.ts';
import {
  findByOrderNo,
  findByOrderNos,
  findStatus,
  findStatusByOrderNo,
  findTransaction,
  findTransactions,
  insertTransactions,
  markFinal,
  recordOpened,
  type TransactionRow,
} from '../../src/transactions/transactions.repository.ts';
import { newTransaction } from '../../src/transactions/new-transaction.ts';
import { lockAvailable, moveToHeldMany } from '../../src/wallet/wallet.repository.ts';
import { lockWithPayins, readPayins, refundedOf } from '../../src/refunds/refunds.repository.ts';
import {
  claimDueDeliveries,
  nextClaimableAt,
  recordAttempts,
  webhookSecrets,
} from '../../src/callbacks/deliveries.repository.ts';
import { claimDueEvents, insertChannelEvents, markApplied } from '../../src/live/notifications.repository.ts';
import { changeablePage, createdPage, openIds, transactionsOf } from '../../src/reconcile/reconcile-reads.ts';

/** What a hot path's statement is issued with: a kysely that records it, and the database's own row locking. */
export interface Issuer {
  db: Kysely<Tables>;
  lockRows: Database['lockRows'];
  readStatus: StatusReader;
}

/** The values a statement is issued with (a merchant of the data set, one of its order numbers, …). */
export interface Values {
  merchantId: string;
  orderNo: string;
  paymentId: string;
  keyHash: string;
  now: number;
}

export interface HotPath {
  name: string;
  /** Issued on this database only (a statement the other database's code path does not make). */
  only?: DatabaseKind;
  /** The indexes each table must be read through, by their key columns; every access to these tables is checked. */
  uses: {
    table: string;
    columns: string[];
    /**
     * Checked on this database only: SQLite's plan does not show the index an INSERT's conflict
     * check goes through (always the unique index ON CONFLICT names).
     */
    only?: DatabaseKind;
  }[];
  /** Names a statement gives its tables (`update callback_deliveries as d`). */
  aliases?: Record<string, string>;
  issue(on: Issuer, v: Values): Promise<unknown>;
}

const PK = ['payment_id'];
const ORDER_NO = ['merchant_id', 'kind', 'merchant_order_no'];

export function newPayin(v: Values): TransactionRow {
  return newTransaction({
    payment_id: v.paymentId,
    merchant_id: v.merchantId,
    kind: 'payin',
    flow: 'onsite',
    merchant_order_no: v.orderNo,
    amount: 50_000,
    currency: 'INR',
    status: 'PENDING',
    channel: 'sandbox',
    request_hash: 'h',
    response_json: '{}',
    expires_at: v.now,
    next_action_at: v.now,
    created_at: v.now,
  });
}

export const HOT_PATHS: HotPath[] = [
  {
    name: 'auth: the key owner (a key cache miss)',
    uses: [
      { table: 'api_keys', columns: ['key_hash'] },
      { table: 'merchants', columns: ['id'] },
    ],
    issue: (on, v) => findKeyOwner(on.db, v.keyHash),
  },
  {
    name: 'creation: insert, the order number as conflict arbiter',
    uses: [{ table: 'transactions', columns: ORDER_NO, only: 'postgres' }],
    issue: (on, v) => insertTransactions(on.db, [newPayin(v)]),
  },
  {
    name: "creation: replay lookups by order number (pay-ins', batched)",
    uses: [{ table: 'transactions', columns: ORDER_NO }],
    aliases: { t: 'transactions' },
    issue: (on, v) =>
      findByOrderNos(on.db, [{ merchantId: v.merchantId, kind: 'payin', orderNo: v.orderNo }]),
  },
  {
    name: "creation: replay lookup by order number (payouts')",
    uses: [{ table: 'transactions', columns: ORDER_NO }],
    issue: (on, v) => findByOrderNo(on.db, v.merchantId, 'payout', v.orderNo),
  },
  {
    name: "creation: a live channel's answer recorded",
    uses: [{ table: 'transactions', columns: PK }],
    issue: (on, v) =>
      recordOpened(on.db, v.paymentId, {
        responseJson: '{}',
        channelTxnId: 'c',
        upiIntent: null,
        expiresAt: v.now,
        nextActionAt: v.now,
      }),
  },
  {
    name: 'status query',
    uses: [{ table: 'transactions', columns: PK }],
    issue: (on, v) => findStatus(on, v.merchantId, 'payin', v.paymentId),
  },
  {
    name: 'status query by merchant_order_no',
    uses: [{ table: 'transactions', columns: ORDER_NO }],
    issue: (on, v) => findStatusByOrderNo(on.db, v.merchantId, 'payin', v.orderNo),
  },
  {
    name: 'refund_status: the refund read',
    uses: [{ table: 'transactions', columns: PK }],
    issue: (on, v) => findTransaction(on.db, v.paymentId),
  },
  {
    name: "notification: the transactions a provider's notifications name, read together",
    uses: [{ table: 'transactions', columns: PK }],
    issue: (on, v) => findTransactions(on.db, [v.paymentId, v.paymentId]),
  },
  {
    name: "refund: replay lookup by refund number (refunds')",
    uses: [{ table: 'transactions', columns: ORDER_NO }],
    issue: (on, v) => findByOrderNo(on.db, v.merchantId, 'refund', v.orderNo),
  },
  {
    name: "refund: the pay-ins of a batch's requests, in a statement of their own",
    uses: [{ table: 'transactions', columns: PK }],
    issue: (on, v) => readPayins(on.db, [v.paymentId]),
  },
  {
    name: "refund: what the refunds of a batch's pay-ins add up to",
    // Those next to their pay-in by the primary key, those from before refund ids did by their index.
    uses: [
      { table: 'transactions', columns: PK },
      { table: 'transactions', columns: ['refund_of'] },
    ],
    aliases: { r: 'transactions' },
    issue: (on, v) => refundedOf(on.db, [v.paymentId]),
  },
  {
    name: "refund (PostgreSQL): wallets locked with the batch's pay-ins and what they have refunded",
    only: 'postgres',
    uses: [
      { table: 'wallets', columns: ['merchant_id', 'currency'] },
      { table: 'transactions', columns: PK },
      { table: 'transactions', columns: ['refund_of'] },
    ],
    aliases: { seen: 'wallets', r: 'transactions' },
    issue: (on, v) => lockWithPayins(on.db, [{ merchantId: v.merchantId, currency: 'INR' }], [v.paymentId]),
  },
  {
    name: 'payout: wallets locked for the holds',
    uses: [{ table: 'wallets', columns: ['merchant_id', 'currency'] }],
    issue: (on, v) => lockAvailable(on.db, on, [{ merchantId: v.merchantId, currency: 'INR' }]),
  },
  {
    name: 'payout: holds moved',
    uses: [{ table: 'wallets', columns: ['merchant_id', 'currency'] }],
    aliases: { w: 'wallets' },
    issue: (on, v) =>
      moveToHeldMany(on.db, [{ merchantId: v.merchantId, currency: 'INR', amount: 1 }], v.now),
  },
  {
    name: 'worker: claim of due transactions',
    uses: [
      { table: 'transactions', columns: ['channel', 'next_action_at'] },
      { table: 'transactions', columns: PK },
    ],
    issue: (on, v) => claimDueTransactions(on, 'sandbox', v.now, 30_000, 50),
  },
  {
    name: 'worker: accepted payouts recorded',
    uses: [{ table: 'transactions', columns: PK }],
    issue: (on, v) =>
      markProcessing(on.db, [{ paymentId: v.paymentId, channelTxnId: 'c', nextActionAt: v.now }], v.now),
  },
  {
    name: 'worker: transactions asked about given back together',
    uses: [{ table: 'transactions', columns: PK }],
    issue: (on, v) =>
      rescheduleMany(on.db, [
        { paymentId: v.paymentId, nextActionAt: v.now, status: 'PENDING' },
        { paymentId: `${v.paymentId.slice(0, -1)}9`, nextActionAt: v.now, status: 'PROCESSING' },
      ]),
  },
  {
    name: 'worker: a transaction rescheduled',
    uses: [{ table: 'transactions', columns: PK }],
    issue: (on, v) => reschedule(on.db, v.paymentId, v.now),
  },
  {
    name: 'settlement: final statuses',
    uses: [{ table: 'transactions', columns: PK }],
    issue: (on, v) =>
      markFinal(on.db, [{ paymentId: v.paymentId, status: 'SUCCESS', utr: 'u', channelTxnId: '' }], v.now),
  },
  {
    name: 'dispatcher: claim of due deliveries',
    uses: [
      { table: 'callback_deliveries', columns: ['status', 'next_attempt_at'] },
      { table: 'callback_deliveries', columns: ['id'] },
    ],
    issue: (on, v) => claimDueDeliveries(on, v.now, 30_000, 50),
  },
  {
    name: 'dispatcher: when the next delivery is due',
    uses: [{ table: 'callback_deliveries', columns: ['status', 'next_attempt_at'] }],
    issue: (on) => nextClaimableAt(on.db),
  },
  {
    name: "dispatcher: the merchants' webhook secrets",
    uses: [{ table: 'merchants', columns: ['id'] }],
    issue: (on, v) => webhookSecrets(on.db, [v.merchantId]),
  },
  {
    name: 'dispatcher: attempts recorded',
    uses: [{ table: 'callback_deliveries', columns: ['id'] }],
    aliases: { d: 'callback_deliveries' },
    issue: (on, v) =>
      recordAttempts(on.db, [
        {
          deliveryId: 'cbd_x',
          claimedAttempts: 1,
          claimedLease: v.now,
          startedAt: v.now,
          latencyMs: 1,
          httpStatus: 200,
          errorKind: null,
          snippet: null,
          status: 'delivered',
          nextAttemptAt: null,
          at: v.now,
        },
      ]),
  },
  {
    name: 'notifications: stored, the provider event as conflict arbiter',
    uses: [{ table: 'channel_events', columns: ['provider', 'event_id'], only: 'postgres' }],
    issue: (on, v) =>
      insertChannelEvents(
        on.db,
        [
          {
            provider: 'setu',
            event_id: 'e1',
            payment_id: v.paymentId,
            reference: 'r',
            type: 't',
            body: '{}',
          },
        ],
        'applied',
        v.now,
        null,
      ),
  },
  {
    name: 'notifications: the transactions they name',
    uses: [{ table: 'transactions', columns: PK }],
    issue: (on, v) => findTransactions(on.db, [v.paymentId]),
  },
  {
    name: 'notifications: claim of stored notifications nobody applied',
    uses: [
      { table: 'channel_events', columns: ['state', 'next_action_at'] },
      { table: 'channel_events', columns: ['id'] },
    ],
    issue: (on, v) => claimDueEvents(on, v.now, 30_000, 50),
  },
  {
    name: 'notifications: one marked applied',
    uses: [{ table: 'channel_events', columns: ['id'] }],
    issue: (on, v) => markApplied(on.db, 1, v.now),
  },
  // Reconciliation reads a live channel's transactions. The data set holds sandbox rows only, all
  // created within a few hours and a tenth of them open: for the sandbox, a day's or the open ones'
  // index would read as much as any other, so the channel named is one the data holds none of.
  {
    name: "reconcile: a page of a channel's transactions of a day",
    uses: [{ table: 'transactions', columns: ['channel', 'created_at', 'payment_id'] }],
    issue: (on, v) =>
      createdPage(
        on.db,
        'setu',
        v.now - 86_400_000,
        v.now,
        { createdAt: v.now - 5_000_000, paymentId: '' },
        500,
      ),
  },
  {
    name: "reconcile: a page of a channel's transactions that became final in the lookback",
    uses: [{ table: 'transactions', columns: ['channel', 'finalized_at', 'payment_id'] }],
    issue: (on, v) =>
      changeablePage(
        on.db,
        'setu',
        { from: v.now - 8 * 86_400_000, to: v.now - 86_400_000, createdBefore: v.now - 86_400_000 },
        { finalizedAt: v.now - 5 * 86_400_000, paymentId: '' },
        500,
      ),
  },
  {
    name: "reconcile: a channel's open transactions from before the day",
    uses: [{ table: 'transactions', columns: ['channel', 'next_action_at'] }],
    issue: (on, v) => openIds(on.db, 'setu', v.now - 86_400_000),
  },
  {
    name: 'reconcile: a page of them read',
    uses: [{ table: 'transactions', columns: PK }],
    issue: (on, v) => transactionsOf(on.db, [v.paymentId, `${v.paymentId.slice(0, -1)}9`]),
  },
];
