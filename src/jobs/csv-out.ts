// The download's CSV, one line per scored row. Every value a spreadsheet would run as a formula
// (leading =, +, -, @, tab or carriage return) is prefixed with an apostrophe, and values with
// commas, quotes or line breaks are quoted.

import type { ResultRow } from './batch-score.ts';

/** A CSV cell: quoted when needed, and defused when a spreadsheet would run it as a formula. */
export function csvCell(value: unknown): string {
  let s = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const DOWNLOAD_COLUMNS = ['row', 'transaction_id', 'amount', 'customer_id', 'merchant_id', 'risk_score', 'risk_band', 'decision', 'path', 'score_tabular', 'score_behavioral', 'score_velocity', 'score_graph', 'reason_1', 'reason_2', 'reason_3', 'label'] as const;

export function csvLine(r: ResultRow): string {
  const reasons = [0, 1, 2].map((k) => r.top_reasons[k]?.text ?? '');
  const cs = r.channel_scores;
  return [r.row, r.transaction_id, r.amount, r.customer_id, r.merchant_id, r.risk_score, r.risk_band, r.decision, r.path, cs.tabular, cs.behavioral, cs.velocity, cs.graph, ...reasons, r.label ?? ''].map(csvCell).join(',') + '\r\n';
}


export const CSV_HEADER = DOWNLOAD_COLUMNS.join(',') + '\r\n';
