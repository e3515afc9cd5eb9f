/**
 * The one stylesheet of the hosted pages. It is inlined in every page (no second request on a slow
 * phone connection) and allowed by its hash in the Content-Security-Policy, so the policy needs
 * neither 'unsafe-inline' nor a nonce. Colours keep at least 4.5:1 contrast against their background.
 */
import { createHash } from 'node:crypto';

export const PAGE_CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;background:#eef1f6;color:#1a1f36;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
.bar{background:#1a1f36;color:#fff;padding:.75rem 1rem}
.bar-in{max-width:28rem;margin:0 auto;display:flex;justify-content:space-between;align-items:center;gap:1rem}
.brand{font-weight:700;letter-spacing:.02em}
.secure{font-size:.875rem;color:#d5dbe8}
main{max-width:28rem;margin:0 auto;padding:1rem}
.card{background:#fff;border-radius:1rem;padding:1.25rem;box-shadow:0 1px 3px rgba(26,31,54,.12);margin-bottom:1rem}
.label{margin:0;color:#4a5568;font-size:.875rem;text-transform:uppercase;letter-spacing:.06em}
h1{margin:.125rem 0 .25rem;font-size:1.375rem;line-height:1.3;overflow-wrap:anywhere}
h2{margin:0 0 .75rem;font-size:1.0625rem}
.amount{margin:.5rem 0 1rem;font-size:2.25rem;font-weight:700;letter-spacing:-.01em;font-variant-numeric:tabular-nums}
dl{margin:0;display:grid;grid-template-columns:auto 1fr;gap:.375rem 1rem;font-size:.9375rem}
dt{color:#4a5568}
dd{margin:0;text-align:right;font-weight:600;overflow-wrap:anywhere}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-weight:500}
.vpa{overflow-wrap:break-word}
.qr{display:block;width:min(15rem,100%);height:auto;margin:0 auto;border:1px solid #d5dbe8;border-radius:.5rem}
.note{margin:.75rem 0 0;color:#4a5568;font-size:.9375rem}
.hint{margin:.75rem 0 0;text-align:center;color:#4a5568;font-size:.9375rem}
.apps{display:grid;grid-template-columns:repeat(3,1fr);gap:.5rem;margin-top:.625rem}
.btn{display:flex;align-items:center;justify-content:center;width:100%;min-height:3rem;padding:.625rem 1rem;border-radius:.625rem;border:2px solid transparent;font:inherit;font-weight:600;text-align:center;text-decoration:none;cursor:pointer}
.app{padding:.5rem .25rem;background:#fff;color:#1a1f36;border-color:#c3cad9;font-size:.875rem;white-space:nowrap}
.app-upi{background:#1a1f36;color:#fff}
.app{flex-direction:column;gap:.25rem}
.icon{display:flex;align-items:center;justify-content:center;width:1.5rem;height:1.5rem;border-radius:50%;color:#fff;font-size:.8125rem;font-weight:700}
.i-gpay{background:#1a5fd0}
.i-phonepe{background:#5f259f}
.i-paytm{background:#0b5f8a}
.btn:focus-visible{outline:3px solid #2f6fed;outline-offset:2px}
.sandbox{border:2px dashed #b7791f;background:#fffbeb}
.sandbox p{margin:0 0 .75rem;color:#5c3d0b;font-size:.9375rem}
.sim{display:grid;gap:.625rem}
.ok{background:#0f7b3f;color:#fff}
.fail{background:#fff;color:#b42318;border-color:#b42318}
.test{display:inline-block;margin-left:.5rem;padding:0 .5rem;border-radius:999px;background:#fdf0d5;color:#7a4a06;font-weight:700;letter-spacing:.04em}
.left{display:inline-block;padding:.125rem .5rem;border-radius:999px;background:#e6f4ea;color:#0b5a2e}
.result{text-align:center}
.mark{display:flex;align-items:center;justify-content:center;width:4rem;height:4rem;margin:.25rem auto .75rem;border-radius:50%;font-size:2rem;font-weight:700;color:#fff}
.mark-ok{background:#0f7b3f}
.mark-fail{background:#b42318}
.mark-wait{background:#4a5568}
.result .amount{margin:.25rem 0 1rem}
.result dl{text-align:left}
.back{display:block;padding:.75rem;text-align:center;color:#2750b8;font-weight:600}
.back:focus-visible{outline:3px solid #2f6fed;outline-offset:2px}
.copy{min-height:2.75rem;min-width:4rem;margin-left:.25rem;padding:.25rem .75rem;border:2px solid #c3cad9;border-radius:.5rem;background:#fff;color:#1a1f36;font:inherit;font-size:.875rem;font-weight:600;cursor:pointer}
.copy:focus-visible{outline:3px solid #2f6fed;outline-offset:2px}
@media (min-width:48rem){main{display:flex;flex-direction:column}main>*{order:3}main>.card:first-child{order:0}main>.scan{order:1}main>.apps-card{order:2}}
footer{max-width:28rem;margin:0 auto;padding:0 1rem 2rem;text-align:center;color:#4a5568;font-size:.8125rem;overflow-wrap:anywhere}
`.trim();

/** The CSP source that allows exactly `PAGE_CSS`. */
export const PAGE_CSS_HASH = `'sha256-${createHash('sha256').update(PAGE_CSS).digest('base64')}'`;
