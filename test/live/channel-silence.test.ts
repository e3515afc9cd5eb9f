/**
 * A channel whose notifications stop (CONTRACT §10, "Intake that cannot be starved"), on both
 * databases, with Paygate's calls to the fakes going through the spec proxies and
 * NOTIFICATION_SILENCE_S set low: with a live payout open and no notification from Cashfree, exactly
 * one `channel_silent` exception opens; `/metrics` (`paygate_channel_silence_seconds`), the console
 * and `paygate channels check` (its JSON field and its table column) show each channel's silence;
 * once resolved, the next silence opens a new one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signedIn } from '../support/console.ts';
import { onEachDatabase, testAccounts } from '../support/harness.ts';
import { metricValue, until, useLiveBehindDocuments, type LiveGateway } from '../support/live.ts';
import { payout } from '../support/live-payouts.ts';
import { cliAsync } from '../support/process.ts';

const PASSWORD = 'correct horse battery';

const behindDocuments = useLiveBehindDocuments();

await onEachDatabase('a silent channel', (kind) => {
  describe(`NOTIFICATION_SILENCE_S on ${kind}`, () => {
    const env = { NOTIFICATION_SILENCE_S: '1', CHANNEL_TIMEOUT_MS: '5000' };
    const live = behindDocuments(kind, env);
    const silent = (l: LiveGateway) =>
      l.gw.database.db
        .selectFrom('channel_exceptions')
        .select(['id', 'provider', 'resolved_at'])
        .where('kind', '=', 'channel_silent')
        .orderBy('id')
        .execute();

    it('opens exactly one channel_silent while a payout waits and Cashfree sends nothing; metric, console and channels check show it', async () => {
      const l = live();
      const { cashfree } = l;
      Object.assign(cashfree, { ending: 'never', webhooks: false });
      const id = await payout(l, 21);
      await l.waitStatus('payout', id, 'PROCESSING');
      await until(async () => (await silent(l)).length > 0, 'a channel_silent exception', 20_000);
      // The worker keeps looking (twice a second at this setting): still one.
      await new Promise((r) => setTimeout(r, 2_000));
      const open = await silent(l);
      assert.deepEqual(
        open.map((e) => [e.provider, e.resolved_at]),
        [['cashfree', null]],
      );

      const metrics = await (await fetch(`${l.gw.baseUrl}/metrics`)).text();
      const seconds = metricValue(metrics, 'paygate_channel_silence_seconds{channel="cashfree"}');
      assert.ok(seconds !== null && seconds >= 1, `cashfree silent for ${seconds} s`);
      assert.equal(
        metricValue(metrics, 'paygate_channel_silence_seconds{channel="setu"}'),
        null,
        'nothing heard, nothing waits',
      );
      assert.equal(metricValue(metrics, 'paygate_channel_exceptions_open{kind="channel_silent"}'), 1);

      const email = `silence-${kind}@example.com`;
      const accounts = testAccounts(l.gw.database.db);
      await accounts.createUser({ email, role: 'operator', merchantId: null, password: PASSWORD });
      const { cookie } = await signedIn(l.gw, email, PASSWORD);
      const page = await l.gw.app.inject({
        method: 'GET',
        url: '/dashboard/exceptions',
        headers: { cookie },
      });
      assert.equal(page.statusCode, 200);
      const card =
        /<section class="card" aria-labelledby="notified-h">.*?<\/section>/s.exec(page.body)?.[0] ?? '';
      assert.match(
        card,
        /<dt>cashfree<\/dt><dd>none yet <span class="silence" data-silence-s="\d+">· silent for \d+ s while transactions wait<\/span><\/dd>/,
        card,
      );
      assert.match(card, /<dt>setu<\/dt><dd>none yet<\/dd>/, card);

      const cliEnv = {
        DATABASE_URL: l.gw.testDb.url,
        ...l.setu.env(l.proxies.setu!.url),
        ...cashfree.env(l.proxies.cashfree!.url),
        ...env,
      };
      const json = await cliAsync(['channels', 'check', '--json'], cliEnv);
      assert.equal(json.status, 0, json.stdout + json.stderr);
      const byName = new Map((json.json.channels as any[]).map((c) => [c.channel, c]));
      assert.ok(byName.get('cashfree').silence_s >= 1, JSON.stringify(json.json));
      assert.equal(byName.get('cashfree').silent, true);
      assert.equal(byName.get('setu').silence_s, null);
      assert.equal(byName.get('cashfree').last_notification_at, null, 'none came yet');
      assert.ok(
        (json.json.warnings as string[]).some((w) =>
          w.startsWith('cashfree has sent no verified notification'),
        ),
      );
      const human = await cliAsync(['channels', 'check'], cliEnv);
      assert.match(human.stdout, /CHANNEL\s+RESULT\s+SILENCE\s+DETAIL/);
      assert.match(human.stdout, /cashfree\s+ok\s+\d+ s \(silent\)/);

      // A notification ends the silence; the payout is final, nothing waits.
      const t = cashfree.transfers.get(id)!;
      Object.assign(t, { status: 'SUCCESS', transfer_utr: '777700001111' });
      assert.equal(await cashfree.webhook('TRANSFER_SUCCESS', t), 200);
      await l.waitStatus('payout', id, 'SUCCESS');
      const after = await (await fetch(`${l.gw.baseUrl}/metrics`)).text();
      assert.ok(metricValue(after, 'paygate_channel_silence_seconds{channel="cashfree"}')! < seconds);
    });

    it('opens a new channel_silent for the next silence once the last was resolved', async () => {
      const l = live();
      const { cashfree } = l;
      const [first] = await silent(l);
      await l.gw.paygate.services.exceptions.resolve(first!.id, {
        action: 'dismiss',
        note: 'fixed the URL',
        actor: 'cli',
      });
      Object.assign(cashfree, { ending: 'never', webhooks: false });
      const id = await payout(l, 22);
      await l.waitStatus('payout', id, 'PROCESSING');
      await until(async () => (await silent(l)).length === 2, 'a second channel_silent exception', 20_000);
      const open = (await silent(l)).filter((e) => e.resolved_at === null);
      assert.equal(open.length, 1);
      Object.assign(cashfree.transfers.get(id)!, { status: 'SUCCESS', transfer_utr: '777700002222' });
      assert.equal(await cashfree.webhook('TRANSFER_SUCCESS', cashfree.transfers.get(id)!), 200);
      await l.waitStatus('payout', id, 'SUCCESS');
      Object.assign(cashfree, { ending: 'SUCCESS', webhooks: true });
      await l.ledgerOk();
    });
  });
});
