/**
 * The one script of the hosted pages, on pending pages only: it counts the time left down and asks
 * `GET {page}/status` every 2 seconds; when the payment is final or expired it reloads the page, and
 * the server shows the result (or, for P2P, sends the customer back to the merchant). Once the
 * customer submits a form (the sandbox's buttons) it reloads nothing: that navigation shows the
 * result, and a reload racing it would send the customer back to the merchant twice. It also shows
 * the "Copy" button of the payee's UPI id, which only works with a script. Without
 * JavaScript the page works as before ("I have paid: check the status"). Allowed by its hash in the
 * Content-Security-Policy, like the stylesheet; no third-party code.
 */
import { createHash } from 'node:crypto';

export const PAGE_JS = `
(function () {
  var url = document.body.getAttribute('data-status-url');
  if (!url) return;
  var copies = document.querySelectorAll('button[data-copy]');
  for (var i = 0; i < copies.length; i++) {
    (function (b) {
      var source = document.getElementById(b.getAttribute('data-copy'));
      if (!source || !navigator.clipboard) return;
      b.hidden = false;
      b.addEventListener('click', function () {
        navigator.clipboard.writeText(source.textContent).then(function () { b.textContent = 'Copied'; });
      });
    })(copies[i]);
  }
  var left = document.querySelector('time.left');
  var end = Date.now() + 1000 * Number(left ? left.getAttribute('data-seconds') : 0);
  var done = false;
  document.addEventListener('submit', function () { done = true; });
  function finish() {
    if (done) return;
    done = true;
    location.reload();
  }
  function text(s) {
    var m = Math.floor(s / 60), r = s % 60;
    return m > 0 ? m + ' min ' + (r < 10 ? '0' : '') + r + ' s' : r + ' s';
  }
  function tick() {
    var s = Math.max(0, Math.ceil((end - Date.now()) / 1000));
    if (left) {
      left.textContent = text(s);
      left.setAttribute('datetime', 'PT' + Math.floor(s / 60) + 'M' + (s % 60) + 'S');
    }
    if (s === 0) finish();
  }
  function poll() {
    fetch(url, { cache: 'no-store', headers: { accept: 'application/json' } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (j) {
        if (j && (j.status !== 'PENDING' || j.seconds_left === 0)) finish();
        else setTimeout(poll, 2000);
      }, function () { setTimeout(poll, 4000); });
  }
  setInterval(tick, 1000);
  setTimeout(poll, 2000);
})();
`.trim();

/** The CSP source that allows exactly `PAGE_JS`. */
export const PAGE_JS_HASH = `'sha256-${createHash('sha256').update(PAGE_JS).digest('base64')}'`;
