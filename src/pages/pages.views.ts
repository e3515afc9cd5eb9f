/**
 * Server-rendered HTML of the hosted pages. Phone-first (customers pay from phones), readable
 * without JavaScript (the CSP allows none), and every dynamic text goes through `esc`.
 */
import type { PageView } from './pages.service.ts';
import { PAGE_JS } from './pages.script.ts';
import { PAGE_CSS } from './pages.styles.ts';

/** Escapes text for HTML element content and double-quoted attribute values. */
const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** A UPI id that a narrow screen wraps only after its '@' or a '.', never inside a word. */
function upiId(vpa: string): string {
  return esc(vpa).replace(/([@.])/g, '$1<wbr>');
}

export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

function layout(title: string, body: string, statusUrl: string | null = null, refreshS = 0): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="color-scheme" content="light">
<meta name="format-detection" content="telephone=no">${refreshS > 0 ? `\n<meta http-equiv="refresh" content="${refreshS}">` : ''}
<title>${esc(title)}</title>
<link rel="icon" href="data:,">
<style>${PAGE_CSS}</style>
</head>
<body${statusUrl ? ` data-status-url="${esc(statusUrl)}"` : ''}>
<div class="bar"><div class="bar-in"><span class="brand">Paygate</span><span class="secure">Secure UPI payment</span></div></div>
<main>
${body}
</main>${statusUrl ? `\n<script>${PAGE_JS}</script>` : ''}
</body>
</html>
`;
}

/** "14 min 05 s" for people; the `<time>` element carries the ISO duration for machines. */
export function timeLeft(seconds: number): { text: string; iso: string } {
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  return { text: m > 0 ? `${m} min ${String(s).padStart(2, '0')} s` : `${s} s`, iso: `PT${m}M${s}S` };
}

function summary(v: PageView, extra = ''): string {
  return `<dl>
<dt>Order number</dt><dd class="mono">${esc(v.orderNo)}</dd>${extra}
</dl>`;
}

function pendingPage(v: PageView, self: string): string {
  const left = timeLeft(v.secondsLeft);
  const links = v.links;
  const qr = v.qrSvg
    .trim()
    .replace('<svg ', `<svg class="qr" role="img" aria-labelledby="qr-title" `)
    .replace(
      /^(<svg[^>]*>)/,
      `$1<title id="qr-title">UPI QR code to pay ${esc(v.amountText)} to ${esc(v.merchantName)}</title>`,
    );
  const sandbox = v.sandbox
    ? `<section class="card sandbox" aria-labelledby="sandbox-h">
<h2 id="sandbox-h">Sandbox payment</h2>
<p>This is a test payment: no money moves. Choose the outcome the merchant should receive.</p>
<form class="sim" method="post" action="${esc(self)}/simulate">
<button class="btn ok" type="submit" name="status" value="SUCCESS">Simulate success</button>
<button class="btn fail" type="submit" name="status" value="FAILED">Simulate failure</button>
</form>
</section>`
    : '';
  const appLinks = links
    ? `<section class="card apps-card" aria-labelledby="apps-h">
<h2 id="apps-h">Pay with a UPI app on this phone</h2>
<a class="btn app-upi" href="${esc(links.upi)}">Open UPI app</a>
<div class="apps">
<a class="btn app" href="${esc(links.gpay)}"><span class="icon i-gpay" aria-hidden="true">G</span>Google Pay</a>
<a class="btn app" href="${esc(links.phonepe)}"><span class="icon i-phonepe" aria-hidden="true">P</span>PhonePe</a>
<a class="btn app" href="${esc(links.paytm)}"><span class="icon i-paytm" aria-hidden="true">₹</span>Paytm</a>
</div>
</section>`
    : '';
  return layout(
    `Pay ${v.amountText} to ${v.merchantName}`,
    `<section class="card" aria-labelledby="merchant-h">
<p class="label">Paying${v.sandbox ? ' <span class="test">Test mode</span>' : ''}</p>
<h1 id="merchant-h">${esc(v.merchantName)}</h1>
<p class="amount">${esc(v.amountText)}</p>
${summary(v, `\n<dt>Pay to UPI ID</dt><dd><span class="mono vpa" id="vpa">${upiId(v.payeeVpa)}</span> <button class="copy" type="button" data-copy="vpa" hidden>Copy</button></dd>\n<dt>Time left</dt><dd><time class="left" datetime="${left.iso}" data-seconds="${v.secondsLeft}">${left.text}</time></dd>`)}${
      v.returnsTo
        ? `\n<p class="note">After paying you will be taken back to ${esc(v.merchantName)}.</p>`
        : ''
    }
</section>
${appLinks}
<section class="card scan" aria-labelledby="scan-h">
<h2 id="scan-h">Scan to pay</h2>
${qr}
<p class="hint">Scan with any UPI app on another phone and approve the payment.</p>
</section>
${sandbox}
<a class="back" href="${esc(self)}">I have paid: check the status</a>
<footer>Payment ID <span class="mono">${esc(v.paymentId)}</span></footer>`,
    `${self}/status`,
  );
}

function resultPage(v: PageView): string {
  const kinds = {
    SUCCESS: {
      title: 'Payment successful',
      mark: 'mark-ok',
      sign: '✓',
      note: v.notifies
        ? 'The merchant has been notified. You can close this page.'
        : 'You can close this page.',
    },
    FAILED: {
      title: 'Payment failed',
      mark: 'mark-fail',
      sign: '✕',
      note: 'The payment did not go through. Go back to the merchant to try again.',
    },
    in_progress: {
      title: 'Payment in progress',
      mark: 'mark-wait',
      sign: '…',
      note: 'Your bank has not confirmed the payment yet. This page updates when it does; you need not pay again.',
    },
    expired: {
      title: 'Payment request expired',
      mark: 'mark-wait',
      sign: '!',
      note: 'This payment can no longer be paid. Go back to the merchant to start a new one.',
    },
    pending: { title: '', mark: '', sign: '', note: '' },
  } as const;
  const k = kinds[v.state];
  const utr = v.state === 'SUCCESS' && v.utr ? `\n<dt>UTR</dt><dd class="mono">${esc(v.utr)}</dd>` : '';
  const when = v.finalAt
    ? `\n<dt>${v.state === 'SUCCESS' ? 'Paid on' : 'Failed on'}</dt><dd>${esc(v.finalAt)}</dd>`
    : '';
  const word = { SUCCESS: 'Paid', FAILED: 'Failed', in_progress: 'In progress', expired: '', pending: '' }[
    v.state
  ];
  return layout(
    `${k.title}: ${v.amountText} to ${v.merchantName}`,
    `<section class="card result" aria-labelledby="result-h">
<div class="mark ${k.mark}" aria-hidden="true">${k.sign}</div>
<h1 id="result-h">${k.title}</h1>
<p class="label">${esc(v.merchantName)}${v.sandbox ? ' <span class="test">Test mode</span>' : ''}</p>
<p class="amount">${esc(v.amountText)}</p>
${summary(v, v.state === 'expired' ? '' : `\n<dt>Status</dt><dd data-status="${v.state}">${word}</dd>${when}${utr}`)}
<p class="hint">${k.note}</p>${
      v.returnLink ? `\n<a class="back" href="${esc(v.returnLink)}">Back to ${esc(v.merchantName)}</a>` : ''
    }
</section>
<footer>Payment ID <span class="mono">${esc(v.paymentId)}</span></footer>`,
    null,
    // Without a script: the page asks again until the bank has finished the payment.
    v.state === 'in_progress' ? 10 : 0,
  );
}

/** The page of a pay-in: how to pay while pending, else the result. */
export function renderPage(v: PageView, self: string): string {
  return v.state === 'pending' ? pendingPage(v, self) : resultPage(v);
}

/** A page for "not found", "bad request" and the like; `message` is plain text. */
export function renderErrorPage(title: string, message: string): string {
  return layout(
    title,
    `<section class="card result" aria-labelledby="error-h">
<div class="mark mark-wait" aria-hidden="true">!</div>
<h1 id="error-h">${esc(title)}</h1>
<p class="hint">${esc(message)}</p>
</section>`,
  );
}
