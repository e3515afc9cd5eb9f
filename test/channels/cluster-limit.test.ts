/**
 * A provider's limit is the whole cluster's (CONTRACT §10) on PostgreSQL: the gates of three
 * processes (each with its own connections to one database) take their turns from it, so between
 * them they start at most the limit (and a call's slack) in any second; a 429 one of them hears
 * pauses the others' calls too, and a provider failing every call backs off for all of them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createDatabase, type TestDatabase } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { migrate, openDatabase, type Database } from '../../src/db/database.ts';
import { channelTurns } from '../../src/db/channel-turns.ts';
import { SharedThrottle } from '../../src/channels/shared-throttle.ts';

const RPS = 20;

/** The most starts any one-second window holds, measured from each start. */
function busiestSecond(at: readonly number[]): number {
  let most = 0;
  for (let i = 0, j = 0; i < at.length; i++) {
    while (j < at.length && at[j]! < at[i]! + 1000) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

describe(
  'three processes on one PostgreSQL share a provider’s limit',
  { skip: await skipFor('postgres') },
  () => {
    let testDb: TestDatabase;
    let databases: Database[] = [];
    let channel = 0;

    before(async () => {
      testDb = await createDatabase('postgres');
      databases = [1, 2, 3].map(() => openDatabase(testDb.url));
      await migrate(databases[0]!);
    });

    after(async () => {
      for (const d of databases) await d.close();
      await testDb.drop();
    });

    /** A gate per process for a provider of its own. */
    function gates(capMs = 1000): SharedThrottle[] {
      const name = `provider-${++channel}`;
      return databases.map((d) => new SharedThrottle(RPS, name, channelTurns(d)!, capMs));
    }

    it('starts at most the limit and one call in any second between them, and uses the limit', async () => {
      const started: number[] = [];
      const all = gates().flatMap((g) =>
        Array.from({ length: 25 }, () => g.take().then((turn) => turn === true && started.push(Date.now()))),
      );
      await Promise.all(all);
      started.sort((a, b) => a - b);
      assert.equal(started.length, 75);
      // Three per-process limits would start 60 a second; the cluster's, 20 (21 with a late timer's slack).
      assert.ok(busiestSecond(started) <= RPS + 1, `${busiestSecond(started)} calls in one second`);
      // 75 calls at 20 a second take 3.7 s at least.
      assert.ok(started.at(-1)! - started[0]! >= 3600, `75 calls in ${started.at(-1)! - started[0]!} ms`);
    });

    it('a 429 one process hears holds back the calls of the others for its Retry-After', async () => {
      const [a, b] = gates();
      assert.equal(await a!.take(), true);
      a!.limited(1500);
      await new Promise((r) => setTimeout(r, 50));
      const asked = Date.now();
      assert.equal(await b!.take(), true);
      assert.ok(Date.now() - asked >= 1400, `the other process called ${Date.now() - asked} ms later`);
    });

    it('a provider failing every call backs off for every process, one probe at a time, until one is answered', async () => {
      const [a, b, c] = gates();
      for (const g of [a, b, c]) {
        assert.equal(await g!.take(), true);
        g!.failed();
      }
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(await b!.backoffMs(), 1000);
      // One probe a back-off apart.
      const asked = Date.now();
      assert.equal(await c!.take(), true);
      assert.ok(Date.now() - asked >= 700, `the probe went ${Date.now() - asked} ms later`);
      // The next probe is a back-off later: one caller waits for it, one more is not sent.
      const next = Date.now();
      const [probe, refused] = await Promise.all([c!.take(), c!.take()]);
      assert.deepEqual([probe, refused], [true, 'backoff']);
      assert.ok(Date.now() - next >= 700, `the next probe went ${Date.now() - next} ms later`);
      c!.passed();
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(await a!.backoffMs(), 0);
      const again = Date.now();
      assert.equal(await a!.take(), true);
      assert.ok(Date.now() - again < 500, 'calls go at the limit again');
    });

    it('a back-off longer than a caller’s claim, begun by another process, still lets a probe through', async () => {
      // Process a (a reconciliation run during an outage) fails its calls until the back-off reaches its cap, 4 s.
      const [a, b] = gates(4000);
      // Three failures begin it at 1 s; a failure a back-off after it last changed doubles it: 2 s, then 4 s.
      const begun = Date.now();
      while ((await b!.backoffMs()) < 4000 && Date.now() - begun < 20_000) {
        a!.failed();
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(await b!.backoffMs(), 4000);
      // Process b sends with a claim of one second, asking again every 250 ms as a worker's poll would.
      const asked = Date.now();
      const answers = new Set<string>();
      let turn: Awaited<ReturnType<SharedThrottle['take']>> = 'claim';
      while (turn !== true && Date.now() - asked < 20_000) {
        turn = await b!.take(Date.now() + 1000);
        answers.add(String(turn));
        if (turn !== true) await new Promise((r) => setTimeout(r, 250));
      }
      // A turn too late for every caller is left for one who can use it: the probe comes within a back-off
      // (two on a busy machine, whose timers fire late).
      assert.equal(turn, true, `no probe in 20 s (answers: ${[...answers].join(', ')})`);
      assert.ok(answers.has('backoff'), 'the calls before the probe were held by the back-off');
      assert.ok(Date.now() - asked <= 2 * 4000 + 1000, `the probe went ${Date.now() - asked} ms later`);
      b!.passed();
    });
  },
);
