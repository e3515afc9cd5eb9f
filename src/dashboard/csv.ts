/**
 * The transactions export as CSV (RFC 4180). A cell that a spreadsheet would read as a formula
 * (it begins with =, +, -, @, a tab or a carriage return) is prefixed with an apostrophe, so an
 * order number such as `=HYPERLINK(…)` stays text (CONTRACT §11).
 */
import { formatAmount } from '../money.ts';
import { LIST_COLUMNS, type ListRow } from './dashboard.repository.ts';
import { istIso } from '../ist.ts';

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
    r.failure_reason ?? '',
  ]);
}
