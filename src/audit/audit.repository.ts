/**
 * The audit log: every action that changes money or access (an operator's credit, a key rotation,
 * an exception resolved, a user disabled), with who, when and what. Services, the CLI and the
 * console write it; the console lists it.
 */
import type { Kysely } from 'kysely';
import type { AuditActionTable, Tables } from '../db/schema.ts';

type Db = Kysely<Tables>;

export type NewAuditAction = Omit<AuditActionTable, 'id'>;
export type AuditRow = NewAuditAction & { id: number };

export async function insertAuditAction(db: Db, action: NewAuditAction): Promise<void> {
  await db.insertInto('audit_actions').values(action).execute();
}

export async function listAuditActions(
  db: Db,
  merchantId: string | null,
  limit: number,
): Promise<AuditRow[]> {
  let q = db.selectFrom('audit_actions').selectAll();
  if (merchantId !== null) q = q.where('merchant_id', '=', merchantId);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}
