// The download's columns. Its lines are written with the result's, natively (native/src/lines.rs),
// in these columns: one reason cell per reason a row keeps, so the header is made from the same
// `top` the writer was set up with. Every value a spreadsheet would run as a formula (leading =, +,
// -, @, tab or carriage return) is prefixed with an apostrophe, and values with commas, quotes or
// line breaks are quoted.

import { CHANNELS } from '../domain/channels.ts';

/** The download's columns for rows with `top` reasons each. */
export function downloadColumns(top: number): string[] {
  const reasons = Array.from({ length: top }, (_, r) => `reason_${r + 1}`);
  return ['row', 'transaction_id', 'amount', 'customer_id', 'merchant_id', 'risk_score', 'risk_band', 'decision', 'path', ...CHANNELS.map((c) => `score_${c}`), ...reasons, 'label'];
}

/** The download's header line for rows with `top` reasons each. */
export function csvHeader(top: number): string {
  return downloadColumns(top).join(',') + '\r\n';
}
