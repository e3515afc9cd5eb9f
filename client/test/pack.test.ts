/**
 * The SDK as a merchant installs it: `npm pack` in client/ builds dist/ and packs it, and the
 * tarball installed into an empty project imports and works (no registry needed: the SDK has no
 * dependencies).
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { startGateway } from '../../test/support/harness.ts';

const CLIENT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

describe('the SDK package', () => {
  it('packs with its built code, installs from the tarball, verifies a callback, and creates a refund whose callback it verifies', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-sdk-'));
    try {
      const packed = JSON.parse(
        execFileSync(npm, ['pack', '--json', '--pack-destination', dir], { cwd: CLIENT, encoding: 'utf8' }),
      ) as { filename: string; files: { path: string }[] }[];
      const files = packed[0]!.files.map((f) => f.path);
      for (const f of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts'])
        assert.ok(files.includes(f), `${f} is in the package: ${files.join(', ')}`);
      assert.ok(
        !files.some((f) => f.startsWith('src/') || f.startsWith('test/')),
        'sources and tests stay out',
      );

      const project = path.join(dir, 'shop');
      fs.mkdirSync(project);
      fs.writeFileSync(
        path.join(project, 'package.json'),
        JSON.stringify({ name: 'shop', private: true, type: 'module' }),
      );
      execFileSync(
        npm,
        ['install', '--offline', '--no-audit', '--no-fund', path.join(dir, packed[0]!.filename)],
        {
          cwd: project,
          encoding: 'utf8',
        },
      );
      const script = `
        import { createHmac } from 'node:crypto';
        import { Paygate, verifyCallback, SDK_VERSION } from '@paygate/client';
        const body = '{"payment_id":"p1","merchant_order_no":"o1","amount":500.00,"currency":"INR","status":"SUCCESS","utr":"1"}';
        const token = createHmac('sha256', 'whsec_x').update('p1:500.00:SUCCESS').digest('hex');
        console.log(JSON.stringify({
          client: typeof Paygate,
          byDefault: verifyCallback({ rawBody: body, token, secret: 'whsec_x' }),
          valid: verifyCallback({ rawBody: body, token, secret: 'whsec_x', requireStandardWebhooks: false }),
          forged: verifyCallback({ rawBody: body, token, secret: 'whsec_y', requireStandardWebhooks: false }),
          version: SDK_VERSION,
        }));`;
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: project,
        encoding: 'utf8',
      });
      assert.deepEqual(JSON.parse(out), {
        client: 'function',
        byDefault: false,
        valid: true,
        forged: false,
        version: '0.1.0',
      });

      // Against a running sandbox gateway: the installed SDK takes a payment, refunds part of it and
      // verifies the refund's callback on its own server.
      const gw = await startGateway('sqlite', {
        listen: true,
        worker: true,
        env: { ALLOW_PRIVATE_CALLBACK_URLS: 'true', SANDBOX_PAYOUT_SETTLE_MS: '100' },
      });
      try {
        const refundScript = `
          import http from 'node:http';
          import { Paygate, createCallbackHandler } from '@paygate/client';
          const paygate = new Paygate({ apiKey: process.env.KEY, baseUrl: process.env.BASE });
          let resolveRefund;
          const arrived = new Promise((r) => (resolveRefund = r));
          const handler = createCallbackHandler({
            secret: process.env.SECRET,
            onCallback: () => {},
            onRefund: (refund) => resolveRefund(refund),
          });
          const server = http.createServer((req, res) => void handler(req, res));
          await new Promise((r) => server.listen(0, '127.0.0.1', r));
          const callbackUrl = 'http://127.0.0.1:' + server.address().port + '/paygate/callback';
          const payin = await paygate.createOnsitePayin({ money: { amount: 500 }, merchant_order_no: 'sdk-order-1' });
          await paygate.completeSandboxPayin(payin.payment_id, 'SUCCESS');
          const refund = await paygate.createRefund({
            payment_id: payin.payment_id,
            money: { amount: 120.5 },
            merchant_refund_no: 'sdk-refund-1',
            callback_url: callbackUrl,
          });
          const verified = await arrived;
          const status = await paygate.refundStatus(refund.refund_id);
          server.close();
          console.log(JSON.stringify({ created: refund.status, replayed: refund.replayed, verified, status: status.status, same: verified.refund_id === refund.refund_id }));`;
        const run = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', refundScript], {
          cwd: project,
          encoding: 'utf8',
          env: {
            ...process.env,
            KEY: gw.merchant.api_key,
            SECRET: gw.merchant.webhook_secret,
            BASE: gw.baseUrl,
          },
          timeout: 60_000,
        });
        const result = JSON.parse(run.stdout);
        assert.equal(result.created, 'PENDING');
        assert.equal(result.replayed, false);
        assert.equal(result.same, true);
        assert.equal(result.status, 'SUCCESS');
        assert.equal(result.verified.amount, 120.5);
        assert.equal(result.verified.status, 'SUCCESS');
        assert.equal(result.verified.merchant_refund_no, 'sdk-refund-1');
      } finally {
        await gw.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
