/**
 * The exceptions' part of `paygate ledger verify`: the money the open exceptions hold must be what
 * the suspense and receivable accounts show, and every exception that took money in (a payment into
 * suspense, a debt into the receivable) must have the journal that took it.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { EXTERNAL } from '../wallet/ledger.ts';
import { externalAccountSums, journalKindSums } from '../wallet/wallet.repository.ts';
import { heldSums, outstandingSums } from './exceptions.repository.ts';

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

/** The journals that take an exception's money in, by what it holds, with the sign the account shows it in. */
const OPENING = {
  suspense: { account: EXTERNAL.suspense, kinds: ['suspense_in', 'refund_returned'], sign: 1n },
  receivable: { account: EXTERNAL.receivable, kinds: ['payout_receivable', 'refund_receivable'], sign: -1n },
} as const;

/**
 * Every exception that held money from its opening has the journal that took it in: what the
 * exceptions ever held, per kind of money and currency, is what those journals add up to. A journal
 * missing (or one too many) is money that moved at the provider with no trace in the ledger.
 */
export async function exceptionJournalsCheck(db: Kysely<Tables>): Promise<string[]> {
  const problems: string[] = [];
  const held = await heldSums(db);
  for (const holds of ['suspense', 'receivable'] as const) {
    const { account, kinds, sign } = OPENING[holds];
    const journaled = new Map(
      (await journalKindSums(db, account, [...kinds])).map((r) => [r.currency, sign * r.total]),
    );
    const opened = new Map(held.filter((r) => r.holds === holds).map((r) => [r.currency, r.total]));
    for (const currency of new Set([...journaled.keys(), ...opened.keys()])) {
      const j = journaled.get(currency) ?? 0n;
      const o = opened.get(currency) ?? 0n;
      if (j !== o)
        problems.push(
          `exceptions took ${o} paise into ${account} ${currency}, but the journals that take money in add up to ${j}`,
        );
    }
  }
  return problems;
}
