/**
 * On SQLite one seed is one history, byte for byte: the commands, the faults, the ids (seeded
 * through `seedIds`) and everything the services answer. Run twice, each seed prints the same lines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { base62, secretBase62, seedIds } from '../../src/ids.ts';
import { generate } from '../../sim/commands.ts';
import { runHistory } from '../../sim/history.ts';
import { sqliteStore } from '../../sim/sqlite-store.ts';

const SEEDS = [1, 2, 3, 4, 5, 6];

describe('the simulator on SQLite', () => {
  it('runs the same seed twice into the same history, byte for byte', async () => {
    const store = await sqliteStore();
    for (const seed of SEEDS) {
      const plan = { seed, ...generate(seed, 60) };
      assert.deepEqual(generate(seed, 60), generate(seed, 60));
      const first = (await runHistory(plan, store)).lines.join('\n');
      const second = (await runHistory(plan, store)).lines.join('\n');
      assert.equal(second, first, `seed ${seed} gave two histories`);
      // The history names what happened: transactions made and their statuses, not only the commands.
      assert.match(first, /-→PENDING/);
    }
    await store.close();
  });

  it('seeds ids only: a secret comes from the CSPRNG while ids are seeded', () => {
    seedIds(() => 7);
    try {
      assert.equal(base62(8), 'HHHHHHHH');
      assert.notEqual(secretBase62(20), secretBase62(20));
      assert.doesNotMatch(secretBase62(20), /^H+$/);
    } finally {
      seedIds(null);
    }
  });

  it('gives different seeds different histories', async () => {
    const store = await sqliteStore();
    const a = await runHistory({ seed: 1, ...generate(1, 30) }, store);
    const b = await runHistory({ seed: 2, ...generate(2, 30) }, store);
    await store.close();
    assert.notEqual(a.lines.join('\n'), b.lines.join('\n'));
  });
});
