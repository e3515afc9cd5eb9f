/** UPI intents, app deep links and their QR code (docs/integration.md §2, offsite flow). */
import encodeQR from 'qr';
import { formatAmount } from '../money.ts';
import { qrPng } from './qr-png.ts';
import { qrSvgMarkup } from './qr-svg.ts';

export interface UpiPayment {
  payeeVpa: string;
  payeeName: string;
  /** paise */
  amount: number;
  currency: string;
  paymentId: string;
  orderNo: string;
}

/** The query every UPI app understands: pa, pn, am, cu, tr, tn, each URL-encoded. */
export function upiQuery(p: UpiPayment): string {
  const e = encodeURIComponent;
  return `pa=${e(p.payeeVpa)}&pn=${e(p.payeeName)}&am=${formatAmount(p.amount)}&cu=${e(p.currency)}&tr=${e(p.paymentId)}&tn=${e(p.orderNo)}`;
}

/** The UPI intent a QR code carries and UPI apps open. */
export function upiIntent(p: UpiPayment): string {
  return `upi://pay?${upiQuery(p)}`;
}

/** A UPI intent as a deep link into the generic UPI handler and into three apps. */
export function deepLinks(intent: string): { upi: string; gpay: string; phonepe: string; paytm: string } {
  const q = intent.slice(intent.indexOf('?') + 1);
  return {
    upi: `upi://pay?${q}`,
    gpay: `tez://upi/pay?${q}`,
    phonepe: `phonepe://pay?${q}`,
    paytm: `paytmmp://pay?${q}`,
  };
}

/** The payee (`pa`) of a UPI intent, or "" when it names none. */
export function intentPayee(intent: string): string {
  return new URLSearchParams(intent.slice(intent.indexOf('?') + 1)).get('pa') ?? '';
}

/** Light modules around the symbol, in the PNG and on the page. */
const QUIET_ZONE = 2;
/** Pixels per module of the PNG. */
const PNG_SCALE = 4;

/**
 * The intent's QR symbol as rows of modules (true = dark), quiet zone included. Error correction L
 * keeps it small; phone cameras read it easily from a screen. The `qr` package encodes it: small,
 * maintained, and with the PNG written here the fastest of those measured (docs/performance.md).
 */
function qrRows(text: string): boolean[][] {
  return encodeQR(text, 'raw', { ecc: 'low', border: QUIET_ZONE });
}

/**
 * A PNG data URL of the intent, 4-pixel modules. A pure function of the text: an idempotent
 * replay redraws it instead of storing it.
 */
export async function qrDataUrl(text: string): Promise<string> {
  return `data:image/png;base64,${qrPng(qrRows(text), PNG_SCALE).toString('base64')}`;
}

/** The same QR as SVG markup, for the hosted pages (no image request, sharp at any size). */
export async function qrSvg(text: string): Promise<string> {
  return qrSvgMarkup(qrRows(text));
}
