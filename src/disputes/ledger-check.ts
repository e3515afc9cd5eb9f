/**
 * The disputes' part of `paygate ledger verify`: what lost disputes left owed (the part of their
 * refunds the merchants' balances lacked) is what the journals that took it into
 * `external:receivable` add up to. What is still owed is checked with the other exceptions' money
 * (`exceptionsLedgerCheck`), since a dispute's exception carries its debt.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { EXTERNAL } from '../wallet/ledger.ts';
import { DISPUTE_RECEIVABLE } from '../wallet/dispute.ledger.ts';
import { journalKindSums } from '../wallet/wallet.repository.ts';
import { owedSums } from './disputes.repository.ts';

export async function disputesLedgerCheck(db: Kysely<Tables>): Promise<string[]> {
  const journaled = new Map(
    (await journalKindSums(db, EXTERNAL.receivable, [DISPUTE_RECEIVABLE])).map((r) => [r.currency, -r.total]),
  );
  const owed = new Map((await owedSums(db)).map((r) => [r.currency, r.total]));
  const problems: string[] = [];
  for (const currency of new Set([...journaled.keys(), ...owed.keys()])) {
    const j = journaled.get(currency) ?? 0n;
    const o = owed.get(currency) ?? 0n;
    if (j !== o)
      problems.push(
        `lost disputes left ${o} paise owed in ${currency}, but the journals that took it into ${EXTERNAL.receivable} add up to ${j}`,
      );
  }
  return problems;
}
