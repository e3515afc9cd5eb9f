/**
 * `paygate channels check` against the fake providers, each behind its published document (the
 * spec proxy), right and wrong: it passes only when each provider answers as its document says (a
 * login with a token, then Setu's and Cashfree's own not-found answers for an unknown QR and an
 * unknown transfer), and a failure names the host it called. `paygate serve` warns, on both
 * databases, when live channels are on and PUBLIC_URL is not an https address the providers reach.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { publicUrlProblem } from '../../src/outbound/public-url.ts';
import { createDatabase, DATABASES } from '../support/databases.ts';
import { FakeCashfree } from '../support/fake-cashfree.ts';
import { FakeSetu } from '../support/fake-setu.ts';
import { skipFor } from '../support/harness.ts';
import { cliAsync, spawnServer } from '../support/process.ts';
import { CASHFREE_SPEC, SETU_SPEC, startSpecProxy, type SpecProxy } from '../support/spec-proxy.ts';

describe('paygate channels check against the fakes behind their documents', () => {
  let setu: FakeSetu;
  let cashfree: FakeCashfree;
  let setuProxy: SpecProxy;
  let cashfreeProxy: SpecProxy;
  /** Some other web server: every path is a bare 404 page. */
  let stranger: http.Server;
  let strangerUrl = '';
  let env: Record<string, string>;

  before(async () => {
    setu = await new FakeSetu().start();
    cashfree = await new FakeCashfree().start();
    [setuProxy, cashfreeProxy] = await Promise.all([
      startSpecProxy(SETU_SPEC, setu.url),
      startSpecProxy(CASHFREE_SPEC, cashfree.url),
    ]);
    stranger = http.createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not Found</h1>');
    });
    await new Promise<void>((r) => stranger.listen(0, '127.0.0.1', r));
    strangerUrl = `http://127.0.0.1:${(stranger.address() as AddressInfo).port}`;
    env = {
      DATABASE_URL: `sqlite:${path.join(tmpdir(), `paygate-check-${process.pid}.db`)}`,
      ...setu.env(setuProxy.url),
      ...cashfree.env(cashfreeProxy.url),
    };
  });

  after(async () => {
    await Promise.all([setuProxy?.stop(), cashfreeProxy?.stop()]);
    await setu?.stop();
    await cashfree?.stop();
    await new Promise((r) => stranger?.close(r));
  });

  const check = async (overrides: Record<string, string>) => {
    const r = await cliAsync(['channels', 'check', '--json'], { ...env, ...overrides });
    const results = (r.json?.channels ?? []) as { channel: string; ok: boolean; detail: string }[];
    return {
      status: r.status,
      by: new Map(results.map((c) => [c.channel, c])),
      warnings: r.json?.warnings as string[] | undefined,
      out: r.stdout + r.stderr,
    };
  };

  it('passes when both providers answer as their documents say, naming the hosts', async () => {
    const r = await check({});
    assert.equal(r.status, 0, r.out);
    assert.equal(r.by.get('setu')?.ok, true, r.out);
    assert.equal(r.by.get('cashfree')?.ok, true, r.out);
    assert.ok(r.by.get('setu')!.detail.includes(new URL(setuProxy.url).host));
    assert.ok(r.by.get('cashfree')!.detail.includes(new URL(cashfreeProxy.url).host));
    for (const secret of [setu.clientSecret, cashfree.clientSecret]) assert.ok(!r.out.includes(secret));
  });

  const wrongs: [string, () => Record<string, string>, 'setu' | 'cashfree', () => string][] = [
    [
      'a Setu base URL with a wrong path',
      () => ({ SETU_BASE_URL: `${setu.url}/v2` }),
      'setu',
      () => setu.url,
    ],
    ['a Setu base URL of another server', () => ({ SETU_BASE_URL: strangerUrl }), 'setu', () => strangerUrl],
    [
      'a Setu login host that does not resolve',
      () => ({ SETU_AUTH_URL: 'https://setu-login.invalid' }),
      'setu',
      () => 'https://setu-login.invalid',
    ],
    ['a wrong Setu secret', () => ({ SETU_CLIENT_SECRET: 'wrong' }), 'setu', () => setu.url],
    ['a wrong Setu merchant id', () => ({ SETU_MERCHANT_ID: 'nobody' }), 'setu', () => setuProxy.url],
    [
      'a Cashfree base URL with a wrong path',
      () => ({ CASHFREE_BASE_URL: `${cashfree.url}/payout` }),
      'cashfree',
      () => cashfree.url,
    ],
    [
      'a Cashfree base URL of another server',
      () => ({ CASHFREE_BASE_URL: strangerUrl }),
      'cashfree',
      () => strangerUrl,
    ],
    [
      // The fake's 401 is not in Cashfree's document for this read: asked without the proxy.
      'a wrong Cashfree secret',
      () => ({ CASHFREE_CLIENT_SECRET: 'wrong', CASHFREE_BASE_URL: cashfree.url }),
      'cashfree',
      () => cashfree.url,
    ],
  ];
  for (const [what, overrides, channel, host] of wrongs) {
    it(`fails on ${what}, naming the host`, async () => {
      const r = await check(overrides());
      assert.equal(r.status, 1, r.out);
      assert.equal(r.by.get(channel)?.ok, false, r.out);
      const other = channel === 'setu' ? 'cashfree' : 'setu';
      assert.equal(r.by.get(other)?.ok, true, 'the other channel still passes');
      assert.ok(r.by.get(channel)!.detail.includes(new URL(host()).host), r.by.get(channel)!.detail);
      assert.ok(!r.out.includes('wrong'), 'a secret is not echoed');
    });
  }

  it('warns, without failing, when PUBLIC_URL cannot receive the notifications', async () => {
    const local = await check({ PUBLIC_URL: 'http://localhost:8090' });
    assert.equal(local.status, 0, local.out);
    assert.equal(local.warnings?.length, 1, local.out);
    assert.match(local.warnings![0]!, /PUBLIC_URL http:\/\/localhost:8090 cannot receive .* not https/);
    const human = await cliAsync(['channels', 'check'], { ...env, PUBLIC_URL: 'http://localhost:8090' });
    assert.match(human.stdout, /warning: PUBLIC_URL http:\/\/localhost:8090/);
    const good = await check({ PUBLIC_URL: 'https://pay.shop.in' });
    assert.deepEqual(good.warnings, []);
  });

  for (const kind of DATABASES) {
    it(`paygate merchant create --live on ${kind}: registers the UPI id, takes --setu-vpa-id, or exits 1 with VPA_NOT_ROUTABLE`, async (t) => {
      const databaseSkip = await skipFor(kind);
      if (databaseSkip) return t.skip(databaseSkip);
      const db = await createDatabase(kind);
      const create = (...args: string[]) =>
        cliAsync(['merchant', 'create', '--name', 'Live Shop', '--live', ...args, '--json'], {
          ...env,
          DATABASE_URL: db.url,
        });
      try {
        const fresh = await create('--vpa', `cli.${kind}@pineaxis`);
        assert.equal(fresh.status, 0, fresh.stdout + fresh.stderr);
        assert.equal(fresh.json.mode, 'live');
        const taken = `cli.taken.${kind}@pineaxis`;
        setu.takenVpas.add(taken);
        const refused = await create('--vpa', taken);
        assert.equal(refused.status, 1, refused.stdout);
        assert.equal(refused.json.error.code, 'VPA_NOT_ROUTABLE');
        assert.match(refused.json.error.message, new RegExp(`${taken}.*--setu-vpa-id`));
        const human = await cliAsync(
          ['merchant', 'create', '--name', 'Live Shop', '--live', '--vpa', taken],
          {
            ...env,
            DATABASE_URL: db.url,
          },
        );
        assert.equal(human.status, 1);
        assert.equal(human.stderr.trim().split('\n').length, 1, 'one clear line');
        const held = setu.holdVpa(`cli.held.${kind}@pineaxis`);
        const withId = await create('--vpa', held.vpa, '--setu-vpa-id', held.id);
        assert.equal(withId.status, 0, withId.stdout + withId.stderr);
        const usage = await cliAsync(
          ['merchant', 'create', '--name', 'Shop', '--vpa', 'a@b', '--setu-vpa-id', held.id, '--json'],
          { ...env, DATABASE_URL: db.url },
        );
        assert.equal(usage.status, 2, 'a Setu id without --live is a usage error');
        const list = await cliAsync(['merchant', 'list', '--json'], { ...env, DATABASE_URL: db.url });
        const vpas = (list.json.merchants as { vpa: string }[]).map((m) => m.vpa);
        assert.ok(vpas.includes(held.vpa) && !vpas.includes(taken), JSON.stringify(vpas));
      } finally {
        await db.drop();
      }
    });
  }

  it('reports zero violations of either document', () => {
    assert.deepEqual(setuProxy.violations(), []);
    assert.deepEqual(cashfreeProxy.violations(), []);
  });

  for (const kind of DATABASES) {
    it(`paygate serve on ${kind} warns when PUBLIC_URL cannot receive notifications, and not when it can`, async (t) => {
      const databaseSkip = await skipFor(kind);
      if (databaseSkip) return t.skip(databaseSkip);
      const db = await createDatabase(kind);
      try {
        for (const [publicUrl, warns] of [
          ['http://localhost:8090', true],
          ['https://pay.example.com', false],
        ] as const) {
          const server = await spawnServer({ ...env, DATABASE_URL: db.url, PUBLIC_URL: publicUrl });
          await server.stop();
          const warned = server.output().includes(`PUBLIC_URL ${publicUrl} cannot receive`);
          assert.equal(warned, warns, server.output());
        }
      } finally {
        await db.drop();
      }
    });
  }
});

describe('which PUBLIC_URLs the providers can reach', () => {
  it('refuses http, loopback, private and local names; takes public https names and addresses', () => {
    for (const bad of [
      'http://localhost:8090',
      'http://pay.shop.in',
      'https://localhost',
      'https://127.0.0.1:8443',
      'https://10.1.2.3',
      'https://192.168.1.20',
      'https://[::1]',
      'https://[fd00::1]',
      'https://paygate',
      'https://paygate.local',
      'https://pay.internal',
      'https://x.localhost',
    ])
      assert.ok(publicUrlProblem(bad), bad);
    for (const good of ['https://pay.shop.in', 'https://pay.shop.in:8443/base', 'https://49.36.10.5'])
      assert.equal(publicUrlProblem(good), null, good);
  });
});
