// The download's columns. Its lines are written with the result's, natively (native/src/lines.rs):
// every value a spreadsheet would run as a formula (leading =, +, -, @, tab or carriage return) is
// prefixed with an apostrophe, and values with commas, quotes or line breaks are quoted.

export const DOWNLOAD_COLUMNS = ['row', 'transaction_id', 'amount', 'customer_id', 'merchant_id', 'risk_score', 'risk_band', 'decision', 'path', 'score_tabular', 'score_behavioral', 'score_velocity', 'score_graph', 'reason_1', 'reason_2', 'reason_3', 'label'] as const;

/** The channels of the download's score columns, in their order. */
export const DOWNLOAD_SCORE_CHANNELS = DOWNLOAD_COLUMNS.filter((c) => c.startsWith('score_')).map((c) => c.slice('score_'.length));

export const CSV_HEADER = DOWNLOAD_COLUMNS.join(',') + '\r\n';
