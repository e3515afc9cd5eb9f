/**
 * The exceptions' part of `paygate ledger verify`: the money the open exceptions hold must be what
 * the suspense and receivable accounts show.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { EXTERNAL } from '../wallet/ledger.ts';
import { externalAccountSums } from '../wallet/wallet.repository.ts';
import { outstandingSums } from './exceptions.repository.ts';

/**
 * Suspense and the receivable against the open exceptions that hold their money: suspense must
 * equal what they hold, and the receivable what merchants owe (negative, the outside's sign).
 */
export async function exceptionsLedgerCheck(db: Kysely<Tables>): Promise<string[]> {
  const problems: string[] = [];
  const ledger = new Map<string, bigint>();
  for (const r of await externalAccountSums(db, [EXTERNAL.suspense, EXTERNAL.receivable]))
    ledger.set(`${r.account}/${r.currency}`, r.total);
  const held = new Map<string, bigint>();
  for (const r of await outstandingSums(db)) {
    const account = r.holds === 'suspense' ? EXTERNAL.suspense : EXTERNAL.receivable;
    held.set(`${account}/${r.currency}`, r.holds === 'suspense' ? r.total : -r.total);
  }
  for (const key of new Set([...ledger.keys(), ...held.keys()])) {
    const inLedger = ledger.get(key) ?? 0n;
    const inExceptions = held.get(key) ?? 0n;
    if (inLedger !== inExceptions)
      problems.push(
        `${key.replace('/', ' ')} is ${inLedger} paise but the open exceptions that hold its money add up to ${inExceptions}`,
      );
  }
  return problems;
}
