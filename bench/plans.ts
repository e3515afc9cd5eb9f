/**
 * Plans: `test/db/query-plans.test.ts` at 1,000,000 rows. A new database gets `planRows` pay-ins of one
 * merchant (bulk-loaded, no ANALYZE) and a few of a second; then every hot-path statement
 * (`test/support/hot-paths.ts`) is explained as the gateway issues it, once without statistics and
 * once after the gateway gathered them (`keepStatistics`), and every statement that does not go
 * through its index is listed.
 */
import { migrate, openDatabase } from '../src/db/database.ts';
import { keepStatistics } from '../src/db/statistics.ts';
import { HOT_PATHS, type Values } from '../test/support/hot-paths.ts';
import { explainHotPaths, fillHotTables, valuesOf } from '../test/support/query-plans.ts';
import type { Progress } from './load.ts';
import type { BenchOptions } from './options.ts';
import { fillPayins, filledPaymentId, freshDatabase } from './store.ts';

export interface PlansReport {
  kind: 'sqlite' | 'postgres';
  rowsLoaded: number;
  loadSeconds: number;
  statements: number;
  states: { name: string; problems: string[] }[];
}

const BIG = 'mrc_plans_big';
const SMALL = 'mrc_plans_small';

export async function runPlans(opts: BenchOptions, progress: Progress): Promise<PlansReport> {
  const store = await freshDatabase(opts.db, 'plans');
  const database = openDatabase(store.url);
  try {
    await migrate(database);
    await fillHotTables(database, BIG, 0);
    await fillHotTables(database, SMALL, 20);
    const t0 = Date.now();
    await fillPayins(store.url, BIG, 1, opts.planRows, {
      analyze: false,
      progress: (done) =>
        progress.update(
          `[${database.kind}] plans: loaded ${done.toLocaleString('en')} of ${opts.planRows.toLocaleString('en')}`,
        ),
    });
    const loadSeconds = (Date.now() - t0) / 1000;
    progress.line(
      `[${database.kind}] plans: loaded ${opts.planRows.toLocaleString('en')} pay-ins in ${loadSeconds.toFixed(1)} s`,
    );
    // The bulk-loaded rows are the big merchant's: its first one, by the loader's names.
    const big: Values = { ...valuesOf(BIG), orderNo: 'fill-1', paymentId: filledPaymentId(1) };
    const check = async () => [
      ...(await explainHotPaths(database, HOT_PATHS, big)),
      ...(await explainHotPaths(database, HOT_PATHS, valuesOf(SMALL))),
    ];
    const states: PlansReport['states'] = [];
    states.push({ name: 'without statistics', problems: await check() });
    await keepStatistics(database).refresh();
    states.push({ name: 'after the gateway gathered statistics', problems: await check() });
    return {
      kind: database.kind,
      rowsLoaded: opts.planRows,
      loadSeconds,
      statements: HOT_PATHS.length,
      states,
    };
  } finally {
    await database.close();
    await store.drop();
  }
}

export function formatPlans(r: PlansReport): string {
  return [
    `plans (${r.kind}): ${r.rowsLoaded.toLocaleString('en')} pay-ins of one merchant and 20 of another, loaded in ${r.loadSeconds.toFixed(1)} s; ${r.statements} hot-path statements, explained for each merchant`,
    ...r.states.flatMap((s) => [
      `  ${s.name}: ${s.problems.length === 0 ? 'every statement goes through its index' : `${s.problems.length} NOT through their index:`}`,
      ...s.problems.map((p) => `    ${p}`),
    ]),
  ].join('\n');
}
