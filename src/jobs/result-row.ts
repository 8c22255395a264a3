// One scored row of a dataset job, in one definition for both of the job's files: its result line
// (one JSON object a line, keys in RESULT_ROW_KEYS's order) and its download line (the columns of
// `downloadColumns`, made from the same keys). Both are written natively for speed
// (native/src/lines.rs); test/jobs/result-lines.test.ts holds that writer to these definitions
// byte for byte, so a column added here and not there fails the tests.
//
// Every value a spreadsheet would run as a formula (leading =, +, -, @, tab or carriage return) is
// prefixed with an apostrophe in the download, and values with commas, quotes or line breaks are
// quoted.

import { CHANNELS } from '../domain/channels.ts';
import type { TransactionParties } from '../domain/transaction.ts';

export interface ResultRow extends TransactionParties {
  row: number;
  transaction_id: string;
  risk_score: number;
  risk_band: string;
  decision: string;
  path: 'MODEL' | 'COLD_START';
  channel_scores: Record<string, number>;
  top_reasons: { feature: string; contribution: number; text: string }[];
  label: 0 | 1 | null;
}

/** A result line's keys, in the order it writes them. */
export const RESULT_ROW_KEYS = ['row', 'transaction_id', 'amount', 'customer_id', 'merchant_id', 'risk_score', 'risk_band', 'decision', 'path', 'channel_scores', 'top_reasons', 'label'] as const satisfies readonly (keyof ResultRow)[];

// Every key of ResultRow is listed (a compile error otherwise).
const everyKey: Exclude<keyof ResultRow, (typeof RESULT_ROW_KEYS)[number]> extends never ? true : never = true;
void everyKey;

/** The download's columns for rows with `top` reasons each: the result line's keys, with one score
 *  column per channel and one reason cell per reason a row keeps (`top`, which the writer was set
 *  up with). */
export function downloadColumns(top: number): string[] {
  return RESULT_ROW_KEYS.flatMap((key): string[] => {
    if (key === 'channel_scores') return CHANNELS.map((c) => `score_${c}`);
    if (key === 'top_reasons') return Array.from({ length: top }, (_, r) => `reason_${r + 1}`);
    return [key];
  });
}

/** The download's header line for rows with `top` reasons each. */
export function csvHeader(top: number): string {
  return downloadColumns(top).join(',') + '\r\n';
}
