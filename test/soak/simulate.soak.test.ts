/**
 * The simulator's longer budget in `npm run soak`: 200 seeded histories on SQLite and 15 on
 * PostgreSQL, from seed 1000 (npm test runs 1 to 20), every invariant holding after every command. The
 * 100,000-history run is `npm run simulate -- --runs 100000 --jobs 2` (README).
 */
import { describe, it } from 'node:test';
import { sqliteStore } from '../../sim/sqlite-store.ts';
import { postgresStore } from '../../sim/postgres-store.ts';
import { postgresSkip } from '../support/databases.ts';
import { simulateBudget } from '../support/simulation.ts';

const pgSkip = await postgresSkip();

describe('the simulator, a longer budget', () => {
  it('keeps every invariant over 200 seeded histories on SQLite', async () => {
    await simulateBudget(await sqliteStore(), 1000, 200);
  });

  it('keeps every invariant over 15 seeded histories on PostgreSQL', { skip: pgSkip }, async () => {
    await simulateBudget(await postgresStore(), 1000, 15);
  });
});
