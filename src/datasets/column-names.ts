// Our columns of a dataset file, by name: the ones GET /api/datasets/format lists and a column
// mapping names. In a module of their own that loads nothing, so the API's reference
// (src/contract/datasets.ts) can name them without loading the code that reads files (csv.ts).

export const REQUIRED_COLUMNS = ['amount', 'customer_id', 'merchant_id'] as const;
export const OPTIONAL_COLUMNS = ['transaction_id', 'timestamp', 'location', 'payment_type', 'label'] as const;
export type DatasetColumn = (typeof REQUIRED_COLUMNS)[number] | (typeof OPTIONAL_COLUMNS)[number];
export const DATASET_COLUMNS: readonly DatasetColumn[] = [...REQUIRED_COLUMNS, ...OPTIONAL_COLUMNS];

/** Our column name → the file's header that holds it. */
export type ColumnMapping = Partial<Record<DatasetColumn, string>>;
