/**
 * The journals of a lost dispute (CONTRACT §10 "Disputes"): the refund that returns the disputed
 * amount to the customer is held like any refund, from the merchant's available balance as far as
 * it goes (`holdForRefunds`); what the balance lacks is held all the same, owed by the merchant in
 * `external:receivable` (negative while owed), so that the refund's final status moves its whole
 * amount as any refund's does. An operator's `debit` clears the debt (`receivableFromMerchant`).
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { prefixedId } from '../ids.ts';
import { EXTERNAL } from './ledger.ts';
import { addHeld, insertJournal } from './wallet.repository.ts';

/** The journal kind of the part of a lost dispute's refund that the merchant owes. */
export const DISPUTE_RECEIVABLE = 'dispute_receivable';

/** Holds the part of a lost dispute's refund that the merchant's available balance lacked, as its debt. */
export async function holdOwedForDispute(
  db: Kysely<Tables>,
  m: { merchantId: string; currency: string; amount: number; paymentId: string },
  at: number,
): Promise<void> {
  await insertJournal(
    db,
    {
      journalId: prefixedId('jnl'),
      kind: DISPUTE_RECEIVABLE,
      merchantId: m.merchantId,
      currency: m.currency,
      paymentId: m.paymentId,
      lines: [
        { account: EXTERNAL.receivable, amount: -m.amount },
        { account: 'held', amount: m.amount },
      ],
    },
    at,
  );
  await addHeld(db, m.merchantId, m.currency, m.amount, at);
}
