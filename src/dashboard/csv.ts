/**
 * The transactions export as CSV (RFC 4180). A cell that a spreadsheet would read as a formula
 * (it begins with =, +, -, @, a tab or a carriage return) is prefixed with an apostrophe, so an
 * order number such as `=HYPERLINK(…)` stays text (CONTRACT §11).
 */
import { formatAmount } from '../money.ts';
import { IST_OFFSET_MS, LIST_COLUMNS, type ListRow } from './dashboard.repository.ts';

/** The list's columns, times named for their zone. */
export const CSV_HEADER = LIST_COLUMNS.map((c) => (c.endsWith('_at') ? `${c}_ist` : c));

/**
 * A cell, quoted when it holds a separator: a semicolon too, which a spreadsheet set up for it (common
 * in Europe) splits on, so that `x;=HYPERLINK(…)` cannot become a cell of its own that begins with =.
 */
export function csvCell(value: string): string {
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",;\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** An instant as an ISO 8601 time in IST: 2026-11-25T14:03:12.345+05:30. */
export function istIso(at: number | null): string {
  if (at === null) return '';
  return `${new Date(at + IST_OFFSET_MS).toISOString().slice(0, 23)}+05:30`;
}

export function csvLine(cells: string[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

export function csvRow(r: ListRow): string {
  return csvLine([
    r.payment_id,
    r.merchant_id,
    r.kind,
    r.flow,
    r.merchant_order_no,
    formatAmount(r.amount),
    r.currency,
    r.status,
    r.utr,
    istIso(r.created_at),
    istIso(r.finalized_at),
  ]);
}
