/** Seeded histories of the simulator run one after another on one store, each asserted to keep every invariant. */
import assert from 'node:assert/strict';
import { generate } from '../../sim/commands.ts';
import { runHistory } from '../../sim/history.ts';
import type { Store } from '../../sim/sqlite-store.ts';

/** Runs the histories of seeds `first` to `first + runs - 1` (60 commands each), then closes the store. */
export async function simulateBudget(store: Store, first: number, runs: number): Promise<void> {
  try {
    for (let seed = first; seed < first + runs; seed++) {
      const outcome = await runHistory({ seed, ...generate(seed, 60) }, store);
      assert.equal(outcome.failure, null, `seed ${seed}:\n${outcome.lines.join('\n')}`);
    }
  } finally {
    await store.close();
  }
}
