/**
 * Shrinks a failing command list: removes chunks (halves, then quarters, down to single commands)
 * while the history still breaks the same invariant (its words before the first colon), each
 * candidate replayed from the same seed. Bounded by `budget` replays.
 */
import type { Command } from './commands.ts';
import { runHistory, type Outcome, type Plan } from './history.ts';
import type { Store } from './sqlite-store.ts';

function kind(o: Outcome): string | null {
  return o.failure ? o.failure.invariant.split(':')[0]! : null;
}

export async function shrink(
  plan: Plan,
  store: Store,
  budget = 300,
): Promise<{ plan: Plan; outcome: Outcome }> {
  let best = plan;
  let outcome = await runHistory(plan, store);
  const want = kind(outcome);
  if (!want) return { plan, outcome };
  // Nothing after the failing command matters.
  if (outcome.failure!.at >= 0) best = { ...best, commands: best.commands.slice(0, outcome.failure!.at + 1) };
  let tries = 0;
  for (
    let size = Math.ceil(best.commands.length / 2);
    size >= 1 && tries < budget;
    size = Math.floor(size / 2)
  ) {
    for (let start = 0; start < best.commands.length && tries < budget;) {
      const commands: Command[] = [...best.commands.slice(0, start), ...best.commands.slice(start + size)];
      const candidate = { ...best, commands };
      tries++;
      const o = await runHistory(candidate, store);
      if (kind(o) === want) {
        best = candidate;
        outcome = o;
      } else start += size;
    }
  }
  return { plan: best, outcome: await runHistory(best, store) };
}
