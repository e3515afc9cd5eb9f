/**
 * The SDK as a merchant installs it: `npm pack` in client/ builds dist/ and packs it, and the
 * tarball installed into an empty project imports and works (no registry needed: the SDK has no
 * dependencies).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const CLIENT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

describe('the SDK package', () => {
  it('packs with its built code, installs from the tarball and verifies a callback', () => {
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
          valid: verifyCallback({ rawBody: body, token, secret: 'whsec_x' }),
          forged: verifyCallback({ rawBody: body, token, secret: 'whsec_y' }),
          version: SDK_VERSION,
        }));`;
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: project,
        encoding: 'utf8',
      });
      assert.deepEqual(JSON.parse(out), { client: 'function', valid: true, forged: false, version: '0.1.0' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
