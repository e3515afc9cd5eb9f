/**
 * What the hosted payment pages show and do (docs/decisions.md, "Hosted pages"): the onsite page
 * (`/pay`), the P2P provider page (`/p2p`) and the offsite cashier (`/cashier`). Each page belongs to one flow; a
 * payout, an unknown id or another flow's id is "not found". The sandbox buttons settle through
 * the sandbox channel, i.e. through the one final-status transition.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { formatAmount, formatIndian } from '../money.ts';
import type { PayinFlow } from '../payments/flows.ts';
import { deepLinks, intentPayee, qrSvg, upiIntent, type UpiPayment } from '../upi/upi.ts';
import type { SandboxService } from '../sandbox/sandbox.service.ts';
import { findPagePayin, type PageRow } from './pages.repository.ts';
import { isPaymentId } from '../ids.ts';

/** The first path segment of each page. */
export type PageKind = 'pay' | 'p2p' | 'cashier';

const FLOW_OF: Record<PageKind, PayinFlow> = { pay: 'onsite', p2p: 'p2p', cashier: 'offsite' };

/**
 * How long after its final status a P2P page sends the customer back to `redirect_url` (303);
 * later it shows the result with a link, so the gateway's domain does not redirect anywhere for good.
 */
export const RETURN_REDIRECT_MS = 30 * 60_000;

/** What a page shows; `state` decides which parts. */
export interface PageView {
  kind: PageKind;
  paymentId: string;
  merchantName: string;
  orderNo: string;
  /** "₹1,23,456.50" */
  amountText: string;
  /** `in_progress`: a live pay-in past its expiry whose payment the bank has not finished. */
  state: 'pending' | 'in_progress' | 'expired' | 'SUCCESS' | 'FAILED';
  utr: string;
  /** Whole seconds until expiry (pending only). */
  secondsLeft: number;
  sandbox: boolean;
  /** Where the customer goes after paying (P2P only). */
  returnsTo: boolean;
  /** A final P2P page past its redirect window: the merchant's return URL, as a link. */
  returnLink: string | null;
  /** The UPI id the customer pays to. */
  payeeVpa: string;
  /** Whether the merchant gets a callback of the outcome. */
  notifies: boolean;
  /** When the payment became final, in IST ("23 Nov 2026, 4:47 pm IST"), or ''. */
  finalAt: string;
  /** Pending only: the QR markup (drawn from the `qr` package's matrix, no user text in it) and the app links. */
  qrSvg: string;
  links: ReturnType<typeof deepLinks> | null;
}

export type PageOutcome = { page: PageView } | { redirect: string };

export interface PagesOptions {
  /** The name of the sandbox channel: its transactions get the "Simulate" buttons. */
  sandboxChannel: string;
  /** PUBLIC_URL: its path prefix, if any, goes in front of every link, so pages survive a proxy that mounts Paygate under a path. */
  publicUrl: string;
  now: () => number;
}

export class PagesService {
  private readonly basePath: string;
  /** PUBLIC_URL's origin: where the pages' own form posts come from. */
  readonly publicOrigin: string;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly sandbox: SandboxService,
    private readonly options: PagesOptions,
  ) {
    const publicUrl = new URL(options.publicUrl);
    this.basePath = publicUrl.pathname.replace(/\/+$/, '');
    this.publicOrigin = publicUrl.origin;
  }

  /** The page's own path, e.g. `/pay/{id}`. */
  pagePath(kind: PageKind, paymentId: string): string {
    return `${this.basePath}/${kind}/${paymentId}`;
  }

  /** The origin a P2P page's form may end up at (the redirect after the post), for form-action. */
  static redirectOrigin(redirectUrl: string | null): string | null {
    if (!redirectUrl) return null;
    try {
      const url = new URL(redirectUrl);
      return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : null;
    } catch {
      return null;
    }
  }

  /** Finds the pay-in behind a page, or throws 404. */
  async find(kind: PageKind, paymentId: string): Promise<PageRow> {
    const row = isPaymentId(paymentId) ? await findPagePayin(this.db, paymentId) : undefined;
    if (!row || row.txn.flow !== FLOW_OF[kind])
      throw new AppError('PAYMENT_NOT_FOUND', 'No payment with this id');
    return row;
  }

  /** The page, or for a final P2P pay-in with a redirect_url the redirect back to the merchant. */
  async view(row: PageRow, kind: PageKind): Promise<PageOutcome> {
    const { txn } = row;
    const final = txn.status === 'SUCCESS' || txn.status === 'FAILED';
    const back =
      final && txn.redirect_url
        ? returnUrl(txn.redirect_url, txn.payment_id, txn.merchant_order_no, txn.status)
        : null;
    if (back && this.options.now() - (txn.finalized_at ?? 0) < RETURN_REDIRECT_MS) return { redirect: back };
    // Rounded up: a pay-in is payable until its last millisecond, and the page never shows 0 s while payable.
    const secondsLeft = Math.max(0, Math.ceil(((txn.expires_at ?? 0) - this.options.now()) / 1000));
    // A pay-in the worker failed at its expiry was not refused by anyone: it ran out of time.
    const timedOut =
      txn.status === 'FAILED' && txn.expires_at !== null && (txn.finalized_at ?? 0) >= txn.expires_at;
    const state = timedOut
      ? 'expired'
      : final
        ? (txn.status as 'SUCCESS' | 'FAILED')
        : secondsLeft > 0
          ? 'pending'
          : // A live pay-in left PENDING past its expiry waits for a payment in progress (the worker
            // closes one that nobody paid within moments of its expiry, and fails it).
            txn.channel !== this.options.sandboxChannel
            ? 'in_progress'
            : 'expired';
    let svg = '';
    let links: PageView['links'] = null;
    if (state === 'pending') {
      // A live channel's own intent is handed out as it is: its `tr` is the channel's reference.
      const intent = txn.upi_intent ?? upiIntent(this.upiPayment(row));
      svg = await qrSvg(intent);
      links = deepLinks(intent);
    }
    return {
      page: {
        kind,
        paymentId: txn.payment_id,
        merchantName: row.merchantName,
        orderNo: txn.merchant_order_no,
        amountText:
          txn.currency === 'INR' ? formatIndian(txn.amount) : `${txn.currency} ${formatAmount(txn.amount)}`,
        state,
        utr: txn.utr,
        secondsLeft,
        sandbox: txn.channel === this.options.sandboxChannel,
        returnsTo: txn.redirect_url !== null,
        returnLink: back,
        payeeVpa: txn.upi_intent ? intentPayee(txn.upi_intent) : row.merchantVpa,
        notifies: txn.callback_url !== null,
        finalAt: txn.finalized_at ? istTime(txn.finalized_at) : '',
        qrSvg: svg,
        links,
      },
    };
  }

  private upiPayment(row: PageRow): UpiPayment {
    const { txn } = row;
    return {
      payeeVpa: row.merchantVpa,
      payeeName: row.merchantName,
      amount: txn.amount,
      currency: txn.currency,
      paymentId: txn.payment_id,
      orderNo: txn.merchant_order_no,
    };
  }

  /** What a pending page's script polls: the status and the whole seconds left to pay. */
  status(row: PageRow): { status: string; seconds_left: number } {
    const { txn } = row;
    const secondsLeft =
      txn.status === 'PENDING'
        ? Math.max(0, Math.ceil(((txn.expires_at ?? 0) - this.options.now()) / 1000))
        : 0;
    return { status: txn.status, seconds_left: secondsLeft };
  }

  /**
   * A "Simulate" button: settles a pending sandbox pay-in and answers where the browser goes next
   * (the P2P return URL, else the page). On a final or expired pay-in nothing changes and the page
   * shows why. 403 SANDBOX_ONLY for a live pay-in.
   */
  async simulate(row: PageRow, kind: PageKind, status: 'SUCCESS' | 'FAILED'): Promise<string> {
    const { txn } = row;
    const page = this.pagePath(kind, txn.payment_id);
    if (txn.channel !== this.options.sandboxChannel) {
      throw new AppError('SANDBOX_ONLY', 'Only sandbox payments can be simulated');
    }
    if (txn.status !== 'PENDING' || (txn.expires_at ?? 0) <= this.options.now()) return page;
    try {
      const after = await this.sandbox.settle(txn, status, 'page');
      return after.redirect_url
        ? returnUrl(after.redirect_url, after.payment_id, after.merchant_order_no, after.status)
        : page;
    } catch (err) {
      // Another request (a second click, the API, expiry) finalised it a moment earlier: show that.
      if (err instanceof AppError && err.errorCode === 'INVALID_STATE') return page;
      throw err;
    }
  }
}

const IST = new Intl.DateTimeFormat('en-IN', {
  timeZone: 'Asia/Kolkata',
  dateStyle: 'medium',
  timeStyle: 'short',
});

/** A moment as customers in India read it: "23 Nov 2026, 4:47 pm IST". */
export function istTime(ms: number): string {
  return `${IST.format(ms)} IST`;
}

/**
 * `redirect_url` with payment_id, merchant_order_no and status appended to its query, leaving the
 * merchant's own query text and fragment exactly as written.
 */
export function returnUrl(redirectUrl: string, paymentId: string, orderNo: string, status: string): string {
  const hashAt = redirectUrl.indexOf('#');
  const head = hashAt === -1 ? redirectUrl : redirectUrl.slice(0, hashAt);
  const fragment = hashAt === -1 ? '' : redirectUrl.slice(hashAt);
  const e = encodeURIComponent;
  const params = `payment_id=${e(paymentId)}&merchant_order_no=${e(orderNo)}&status=${e(status)}`;
  const sep = !head.includes('?') ? '?' : head.endsWith('?') || head.endsWith('&') ? '' : '&';
  return `${head}${sep}${params}${fragment}`;
}
