/** The flows a pay-in can take; pay-ins and the hosted pages (one page per flow) both name them. */
import type { Flow } from '../db/schema.ts';

/** Onsite, P2P or offsite: every flow but the payout's and the refund's. */
export type PayinFlow = Exclude<Flow, 'payout' | 'refund'>;
