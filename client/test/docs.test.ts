/**
 * The integration guide's examples are run, not just read: its Python verifier against the shared
 * signature vectors, its openssl line against the token it prints, and its error table against
 * the gateway's error list.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { ERROR_STATUS } from '../../src/errors.ts';

const guide = readFileSync(new URL('../../docs/integration.md', import.meta.url), 'utf8');
const vectorsPath = new URL('../../test/vectors/callback-signatures.json', import.meta.url).pathname;
const refundVectorsPath = new URL('../../test/vectors/refund-callback-signatures.json', import.meta.url)
  .pathname;

function has(command: string, versionArgs = ['--version']): boolean {
  return spawnSync(command, versionArgs, { encoding: 'utf8' }).status === 0;
}

function block(lang: string, containing: string): string {
  const found = [...guide.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))]
    .map((m) => m[1]!)
    .find((b) => b.includes(containing));
  assert.ok(found, `a ${lang} block with ${containing}`);
  return found;
}

describe('docs/integration.md', () => {
  it(
    'Python verifier answers every refund signature vector correctly (refund_id:amount:status)',
    { skip: has('python3') ? false : 'python3 is not installed' },
    () => {
      const program = `${block('python', 'def verify_callback')}
import json, sys
bad = [v["name"] for v in json.load(open(sys.argv[1]))["vectors"]
       if verify_callback(v["raw_body"].encode(), v["token"], v["secret"]) != v["valid"]]
print(json.dumps(bad))`;
      const r = spawnSync('python3', ['-c', program, refundVectorsPath], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), []);
    },
  );

  it(
    'Python verifier answers every signature vector correctly',
    { skip: has('python3') ? false : 'python3 is not installed' },
    () => {
      const program = `${block('python', 'def verify_callback')}
import json, sys
bad = [v["name"] for v in json.load(open(sys.argv[1]))["vectors"]
       if verify_callback(v["raw_body"].encode(), v["token"], v["secret"]) != v["valid"]]
print(json.dumps(bad))`;
      const r = spawnSync('python3', ['-c', program, vectorsPath], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), []);
    },
  );

  it(
    'openssl line prints the token it promises',
    { skip: has('openssl', ['version']) ? false : 'openssl is not installed' },
    () => {
      const sh = block('sh', 'openssl dgst');
      const script =
        sh
          .split('\n')
          .filter((l) => /^(SECRET|TOKEN)=/.test(l))
          .join('\n') + '\nprintf %s "$TOKEN"';
      const promised = /echo "\$TOKEN"\s+# ([0-9a-f]{64})/.exec(sh)?.[1];
      const r = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, promised);
      assert.ok(
        guide.includes(`X-Verification-Token: ${promised}`),
        'the sample callback carries the same token',
      );
    },
  );

  it(
    'Standard Webhooks: the openssl lines and the standardwebhooks package give the sample callback its signature',
    { skip: has('openssl', ['version']) ? false : 'openssl is not installed' },
    () => {
      const sample = /^POST \/paygate\/callback HTTP\/1\.1\n([\s\S]*?)\n\n(\{.*\})$/m.exec(guide);
      assert.ok(sample, 'the sample callback');
      const headers = Object.fromEntries(
        sample[1]!
          .split('\n')
          .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 2)]),
      );
      const body = sample[2]!;
      const secret = /^SECRET=(\S+)$/m.exec(block('sh', 'openssl dgst -sha256 -hmac'))![1]!;
      const sh = block('sh', 'hexkey');
      const promised = /echo "\$SIGNATURE"\s+# (\S+)/.exec(sh)?.[1];
      const script = `SECRET='${secret}'\nBODY='${body}'\n${sh.replace(/^echo.*$/m, 'printf %s "$SIGNATURE"')}`;
      const r = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, promised);
      assert.equal(headers['webhook-signature'], promised);
      const at = new Date(Number(headers['webhook-timestamp']) * 1000);
      assert.equal(new Webhook(secret).sign(headers['webhook-id']!, at, body), promised);
    },
  );

  it('error table lists exactly the gateway error codes with their HTTP statuses', () => {
    const table = guide.slice(guide.search(/^\|\s*HTTP\s*\|\s*error_code\s*\|\s*when\s*\|/m));
    const documented: Record<string, number> = {};
    for (const line of table.split('\n').slice(2)) {
      if (!line.startsWith('|')) break;
      const [statuses, codes] = line
        .split('|')
        .slice(1, 3)
        .map((c) => c.trim().split(' · '));
      codes!.forEach((code, i) => (documented[code] = Number(statuses![Math.min(i, statuses!.length - 1)])));
    }
    assert.deepEqual(documented, { ...ERROR_STATUS });
  });
});
