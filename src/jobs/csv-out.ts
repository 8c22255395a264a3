// The download's CSV, one line per scored row. Every value a spreadsheet would run as a formula
// (leading =, +, -, @, tab or carriage return) is prefixed with an apostrophe, and values with
// commas, quotes or line breaks are quoted.

import type { ResultRow } from './batch-score.ts';

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\n\r]/;

/** A CSV cell: quoted when needed, and defused when a spreadsheet would run it as a formula. */
export function csvCell(value: unknown): string {
  // A number other than a negative one (which starts with '-') can need neither: most cells.
  if (typeof value === 'number' && value >= 0) return String(value);
  let s = value === null || value === undefined ? '' : String(value);
  if (FORMULA_START.test(s)) s = `'${s}`;
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const DOWNLOAD_COLUMNS = ['row', 'transaction_id', 'amount', 'customer_id', 'merchant_id', 'risk_score', 'risk_band', 'decision', 'path', 'score_tabular', 'score_behavioral', 'score_velocity', 'score_graph', 'reason_1', 'reason_2', 'reason_3', 'label'] as const;

export function csvLine(r: ResultRow): string {
  const cs = r.channel_scores;
  const reasons = r.top_reasons;
  return (
    `${csvCell(r.row)},${csvCell(r.transaction_id)},${csvCell(r.amount)},${csvCell(r.customer_id)},${csvCell(r.merchant_id)},` +
    `${csvCell(r.risk_score)},${csvCell(r.risk_band)},${csvCell(r.decision)},${csvCell(r.path)},` +
    `${csvCell(cs.tabular)},${csvCell(cs.behavioral)},${csvCell(cs.velocity)},${csvCell(cs.graph)},` +
    `${csvCell(reasons[0]?.text ?? '')},${csvCell(reasons[1]?.text ?? '')},${csvCell(reasons[2]?.text ?? '')},${csvCell(r.label ?? '')}\r\n`
  );
}


export const CSV_HEADER = DOWNLOAD_COLUMNS.join(',') + '\r\n';
