/**
 * The status view's schema, shared by pay-ins and payouts: each builds its own from it with the
 * statuses it can be in, so the two endpoints document different enums but one shape.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { TransactionStatus } from '../db/schema.ts';

/** The status response schema of one kind of payment, titled for the OpenAPI document. */
export function statusResponse<S extends TransactionStatus>(statuses: readonly S[], title: string) {
  return Type.Object(
    {
      status: Type.Unsafe<S>({ type: 'string', enum: [...statuses], description: statuses.join(', ') }),
      money: Type.Object({ amount: Type.Number(), currency: Type.String() }),
      channel_txn_id: Type.String({ description: 'The channel\'s reference; "" until known' }),
      utr: Type.String({ description: '12-digit bank reference; "" until the transaction succeeds' }),
    },
    { title },
  );
}

/** A payment's status as the API shows it, for either kind (any status). */
export type StatusResponse = Static<ReturnType<typeof statusResponse<TransactionStatus>>>;
