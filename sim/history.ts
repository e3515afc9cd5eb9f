/**
 * One history: a fresh database, the world built over it, the commands run one by one with the
 * invariants checked after each, then a quiet end (the providers without faults, every day
 * reconciled and the providers' money weighed against the books, every delayed notification
 * delivered, the clock moved on hours with worker and callback rounds) and the invariants checked
 * once more, the end's among them. Answers the history, line by line.
 */
import { seedIds } from '../src/ids.ts';
import type { Command } from './commands.ts';
import { execute, Made } from './execute.ts';
import { Faults } from './faults.ts';
import { Invariants } from './invariants.ts';
import { providerMoney, reconcileAll } from './provider-money.ts';
import { Rng } from './rng.ts';
import type { Store } from './sqlite-store.ts';
import { simConfig, World } from './world.ts';

export interface Plan {
  seed: number;
  faultRate: number;
  /** AUTO_REFUND_UNMATCHED: unmatched money refunded at once, or left on its exception for an operator. */
  autoRefund: boolean;
  commands: Command[];
}

export interface Outcome {
  lines: string[];
  /** The broken invariant and the command after which it broke (-1: at the end), or null. */
  failure: { at: number; invariant: string } | null;
}

function changes(before: Map<string, string>, after: Map<string, string>): string {
  const out: string[] = [];
  for (const [k, v] of after) if (before.get(k) !== v) out.push(`${k} ${before.get(k) ?? '-'}→${v}`);
  return out.length ? ` | ${out.join(', ')}` : '';
}

export async function runHistory(plan: Plan, store: Store): Promise<Outcome> {
  const idRng = new Rng(plan.seed ^ 0x5eed1d5);
  seedIds(() => idRng.byte());
  const database = await store.fresh();
  const w = new World(simConfig(store.url, plan.autoRefund), new Faults(plan.faultRate), database, store);
  const lines: string[] = [`seed ${plan.seed} faults ${plan.faultRate} auto-refund ${plan.autoRefund}`];
  const made = new Made();
  const invariants = new Invariants();
  let failure: Outcome['failure'] = null;
  try {
    w.open();
    await w.createMerchants();
    let before = new Map<string, string>();
    for (let i = 0; i < plan.commands.length && !failure; i++) {
      const cmd = plan.commands[i]!;
      let line: string;
      try {
        line = await execute(w, made, cmd);
      } catch (err) {
        lines.push(`${i} ${cmd.c}: threw`);
        failure = { at: i, invariant: `unexpected error: ${(err as Error).stack ?? String(err)}` };
        break;
      }
      const broken = await invariants.check(w, made, false);
      lines.push(`${i} ${line}${changes(before, invariants.statuses)}`);
      before = invariants.statuses;
      if (broken) failure = { at: i, invariant: broken };
    }
    if (!failure) {
      const broken = (await quietEnd(w, made, invariants)) ?? (await invariants.check(w, made, true));
      lines.push(`end${changes(before, invariants.statuses)}`);
      if (broken) failure = { at: -1, invariant: broken };
    }
  } finally {
    seedIds(null);
  }
  if (failure)
    lines.push(`BROKEN after ${failure.at < 0 ? 'the end' : `command ${failure.at}`}: ${failure.invariant}`);
  return { lines, failure };
}

/**
 * The providers stop failing and every day is reconciled before anything else tells Paygate what
 * the providers did (what is still undelivered is then learnt only by reconciliation): the
 * providers' money must then match the books. Then delayed notifications arrive, time passes with
 * the worker and the callbacks running, and every day is reconciled again: the money must match
 * again. Answers a broken invariant, or null.
 */
async function quietEnd(w: World, made: Made, invariants: Invariants): Promise<string | null> {
  w.faults.rate = 0;
  w.faults.use(1);
  w.receivers.up = true;
  // A run reads what was created before it started.
  w.clock.t += 1_000;
  await reconcileAll(w);
  const reconciled = await providerMoney(w, true);
  if (reconciled) return `after reconciliation: ${reconciled}`;
  while (w.notices.pending.length > 0) await execute(w, made, { c: 'notice', i: 0, mode: 'deliver', f: 1 });
  // Until two rounds in a row find nothing to do (pay-ins expire, reads come due, callbacks retry).
  for (let round = 0, idle = 0; round < 12 && idle < 2; round++) {
    w.clock.t += 20 * 60_000;
    const claimed = (await w.worker.drain()) + (await w.dispatcher.drain());
    idle = claimed === 0 ? idle + 1 : 0;
  }
  // Before the next nightly run, everything but the providers' money holds already.
  const broken = await invariants.check(w, made, false);
  if (broken) return `after the late notifications: ${broken}`;
  // The next nightly run: what a late notification told out of date (a SUCCESS whose reversal's
  // notification was lost) is read back as it now is.
  await reconcileAll(w);
  return providerMoney(w);
}
