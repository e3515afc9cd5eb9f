/** The tables of the console (users, sessions, sign-in failures, forms, audit) and of reconciliation. */
import type { Generated } from 'kysely';

export type UserRole = 'merchant' | 'operator';

/** A person who signs in to the dashboard: a merchant's user sees that merchant, an operator all. */
export interface UserTable {
  id: string;
  /** Lower case; one user per address. */
  email: string;
  role: UserRole;
  merchant_id: string | null;
  /** scrypt$N$r$p$salt$key, base64url; the password itself is never stored. */
  password_hash: string;
  created_at: number;
  /** When an operator disabled the user; null while they may sign in. */
  disabled_at: number | null;
}

/** A signed-in browser. The cookie carries the token; only its SHA-256 is kept. */
export interface SessionTable {
  token_hash: string;
  user_id: string;
  /** Sent back in every form; a post without it is refused (403). */
  csrf_token: string;
  created_at: number;
  /** The session ends when it has not been used for the idle expiry (12 h). */
  last_seen_at: number;
}

/** A failed sign-in, counted per account (`email:…`) and per address (`ip:…`) over a window. */
export interface SignInFailureTable {
  id: Generated<number>;
  scope: string;
  at: number;
}

/** A dashboard form that moves money, taken once: a second post of it (a double click, a resend by the browser) is refused. */
export interface FormTakenTable {
  /** The form's one-time id, a hidden field. */
  id: string;
  at: number;
}

/** What someone did in the dashboard or the CLI that changed money, access or callbacks. */
export interface AuditActionTable {
  id: Generated<number>;
  at: number;
  /** The user's email, or `cli` for the command line. */
  actor: string;
  /** credit, disable, enable, rotate_key, rotate_secret, callback_url, resend, merchant_create */
  action: string;
  merchant_id: string | null;
  detail: string;
}

/** One reconciliation of one channel for one IST day. */
export interface ReconcileRunTable {
  id: Generated<number>;
  /** The IST day, YYYY-MM-DD. */
  date: string;
  channel: string;
  /** cli or schedule */
  trigger: string;
  started_at: number;
  /** Null while it runs, or when its process died before the end. */
  finished_at: number | null;
  checked: number;
  matched: number;
  mismatched: number;
  unreadable: number;
  /** Exceptions this run opened (a difference an earlier run found is counted in mismatched only). */
  opened: number;
}

/** A difference between a provider and Paygate, kept once: the first run that saw it opened its exception. */
export interface ReconcileMismatchTable {
  id: Generated<number>;
  run_id: number;
  channel: string;
  /** The provider's id of the payment or transfer (the QR's for a pay-in without a payment). */
  reference: string;
  /** status, amount or utr */
  field: string;
  provider_value: string;
  paygate_value: string;
  payment_id: string | null;
  exception_id: number;
  created_at: number;
}

/** Who runs the scheduled reconciliation of a channel for a day: one process at a time, until done. */
export interface ReconcileLeaseTable {
  date: string;
  channel: string;
  holder: string;
  lease_until: number;
  done_at: number | null;
}
