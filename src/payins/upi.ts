/** UPI intents, app deep links and their QR code (CONTRACT §5, offsite flow). */
import QRCode from 'qrcode';
import { formatAmount } from '../money.ts';
import { qrModules } from './qr.ts';
import { qrPng } from './qr-png.ts';

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

export function upiIntent(p: UpiPayment): string {
  return `upi://pay?${upiQuery(p)}`;
}

export function deepLinks(p: UpiPayment): { upi: string; gpay: string; phonepe: string; paytm: string } {
  const q = upiQuery(p);
  return {
    upi: `upi://pay?${q}`,
    gpay: `tez://upi/pay?${q}`,
    phonepe: `phonepe://pay?${q}`,
    paytm: `paytmmp://pay?${q}`,
  };
}

/** Pixels per module and quiet-zone modules of the PNG. */
const PNG_SCALE = 4;
const PNG_MARGIN = 2;

/**
 * A PNG data URL of the intent. Error correction L and 4-pixel modules keep the image small;
 * phone cameras read it easily from a screen.
 *
 * The symbol is the one `QRCode.create(text, { errorCorrectionLevel: 'L' })` makes (`qrModules`),
 * built without the package's per-call overhead, and the PNG is written and compressed by hand
 * (`qrPng`): about 0.1 ms of CPU a call, against 4.5 ms for the package's `toDataURL` and 0.5 ms
 * for the first rewrite (see docs/performance.md). A pure function of the text: an idempotent
 * replay redraws it instead of storing it.
 */
export async function qrDataUrl(text: string): Promise<string> {
  return `data:image/png;base64,${qrPng(qrModules(text), PNG_SCALE, PNG_MARGIN).toString('base64')}`;
}

/** The same QR as SVG markup, for the hosted pages (no image request, sharp at any size). */
export function qrSvg(text: string): Promise<string> {
  return QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'L', margin: 2 });
}
