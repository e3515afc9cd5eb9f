/**
 * `npm run simulate -- [--runs N] [--seed S] [--db sqlite|postgres] [--replay FILE] [--jobs J] [--length L] [--shrink K]`:
 * seeded histories of the real services against simulated providers (`sim/`), the invariants
 * checked after every command. A failing history is shrunk, printed (seed, commands, the broken
 * invariant, the history) and written to `sim-failures/seed-S.json`, which `--replay` runs again
 * exactly. `--jobs` runs that many processes, each taking every J-th seed.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from '../sim/commands.ts';
import { runHistory, type Plan } from '../sim/history.ts';
import { sqliteStore, type Store } from '../sim/sqlite-store.ts';
import { postgresStore } from '../sim/postgres-store.ts';
import { shrink } from '../sim/shrink.ts';

interface Options {
  runs: number;
  seed: number;
  db: 'sqlite' | 'postgres';
  replay: string | null;
  jobs: number;
  length: number;
  /** How many replays shrinking a failure may take. */
  shrink: number;
  /** In a child: which share of the seeds is this process's. */
  share: { index: number; of: number } | null;
}

function parse(argv: string[]): Options {
  const o: Options = {
    runs: 100,
    seed: 1,
    db: 'sqlite',
    replay: null,
    jobs: 1,
    length: 60,
    shrink: 300,
    share: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1] ?? ''];
    i++;
    if (flag === '--runs') o.runs = Number(value);
    else if (flag === '--seed') o.seed = Number(value);
    else if (flag === '--db') o.db = value === 'postgres' ? 'postgres' : 'sqlite';
    else if (flag === '--replay') o.replay = value;
    else if (flag === '--jobs') o.jobs = Number(value);
    else if (flag === '--length') o.length = Number(value);
    else if (flag === '--shrink') o.shrink = Number(value);
    else if (flag === '--share') {
      const [index, of] = value.split('/').map(Number);
      o.share = { index: index!, of: of! };
    } else throw new Error(`unknown option ${flag}`);
  }
  if (!Number.isSafeInteger(o.runs) || o.runs < 1) throw new Error('--runs must be a positive integer');
  return o;
}

const store = (o: Options): Promise<Store> => (o.db === 'postgres' ? postgresStore() : sqliteStore());

async function replay(o: Options): Promise<number> {
  const plan = JSON.parse(fs.readFileSync(o.replay!, 'utf8')) as Plan;
  const s = await store(o);
  const outcome = await runHistory(plan, s);
  await s.close();
  console.log(outcome.lines.join('\n'));
  return outcome.failure ? 1 : 0;
}

/** Runs this process's seeds; answers the first failure's seed, or null. */
async function runSeeds(o: Options): Promise<{ failed: number | null; ran: number }> {
  const s = await store(o);
  let ran = 0;
  for (let k = 0; k < o.runs; k++) {
    if (o.share && k % o.share.of !== o.share.index) continue;
    const seed = o.seed + k;
    const plan: Plan = { seed, ...generate(seed, o.length) };
    const outcome = await runHistory(plan, s);
    ran++;
    if (outcome.failure) {
      await s.close();
      return { failed: seed, ran };
    }
  }
  await s.close();
  return { failed: null, ran };
}

async function report(o: Options, seed: number): Promise<void> {
  const s = await store(o);
  const { plan, outcome } = await shrink({ seed, ...generate(seed, o.length) }, s, o.shrink);
  await s.close();
  const file = path.join('sim-failures', `seed-${seed}.json`);
  fs.mkdirSync('sim-failures', { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(plan, null, 1)}\n`);
  console.log(`FAILED seed ${seed} (${o.db})`);
  console.log(`broken: ${outcome.failure?.invariant ?? '(did not fail again after shrinking)'}`);
  console.log(`shrunk commands (${plan.commands.length}):`);
  for (const c of plan.commands) console.log(`  ${JSON.stringify(c)}`);
  console.log('history:');
  console.log(outcome.lines.map((l) => `  ${l}`).join('\n'));
  console.log(`replay: npm run simulate -- --db ${o.db} --replay ${file}`);
}

/** Runs the seeds in `jobs` child processes; answers the first failing seed, or null. */
async function inChildren(o: Options, argv: string[]): Promise<{ failed: number | null; ran: number }> {
  const script = fileURLToPath(import.meta.url);
  const results = await Promise.all(
    Array.from({ length: o.jobs }, (_, index) => {
      const child = spawn(
        process.execPath,
        [...process.execArgv, script, ...argv, '--share', `${index}/${o.jobs}`],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      return new Promise<{ failed: number | null; ran: number }>((resolve) =>
        child.on('close', () =>
          resolve(JSON.parse(out.trim().split('\n').pop() || '{"failed":null,"ran":0}')),
        ),
      );
    }),
  );
  const failures = results.flatMap((r) => (r.failed === null ? [] : [r.failed]));
  return {
    failed: failures.length ? Math.min(...failures) : null,
    ran: results.reduce((s, r) => s + r.ran, 0),
  };
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const o = parse(argv);
  if (o.replay) return replay(o);
  if (o.share) {
    console.log(JSON.stringify(await runSeeds(o)));
    return 0;
  }
  const started = performance.now();
  const cpu = process.cpuUsage();
  const { failed, ran } =
    o.jobs > 1
      ? await inChildren(
          o,
          argv.filter((a, i) => a !== '--jobs' && argv[i - 1] !== '--jobs'),
        )
      : await runSeeds(o);
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${ran} histories on ${o.db} in ${seconds.toFixed(1)} s: ${(ran / seconds).toFixed(1)} histories/s`,
  );
  if (o.jobs <= 1) {
    // On a shared machine the wall time depends on the others; this process's CPU time does not.
    const used = process.cpuUsage(cpu);
    const cpuSeconds = (used.user + used.system) / 1e6;
    console.log(`CPU ${cpuSeconds.toFixed(1)} s: ${(ran / cpuSeconds).toFixed(1)} histories per CPU-second`);
  }
  if (failed === null) {
    console.log('every invariant held');
    return 0;
  }
  await report(o, failed);
  return 1;
}

process.exitCode = await main();
