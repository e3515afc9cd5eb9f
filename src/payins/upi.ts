/** UPI intents, app deep links and their QR code (CONTRACT §5, offsite flow). */
import QRCode from 'qrcode';
import { formatAmount } from '../money.ts';

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

/**
 * A PNG data URL of the intent. Error correction L and 4-pixel modules keep the image small and
 * cheap to encode; phone cameras read it easily from a screen.
 */
export function qrDataUrl(text: string): Promise<string> {
  return QRCode.toDataURL(text, { errorCorrectionLevel: 'L', margin: 2, scale: 4 });
}

/** The same QR as SVG markup, for the hosted pages (no image request, sharp at any size). */
export function qrSvg(text: string): Promise<string> {
  return QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'L', margin: 2 });
}
