// Our columns of a dataset file, by name: the ones GET /api/datasets/format lists and a column
// mapping names, and the mapping's shape (our columns, and an organization's declared fields, each
// to the file's header that holds it). In a module of their own that loads nothing, so the API's
// reference (src/contract/datasets.ts) can name them without loading the code that reads files
// (csv.ts).

export const REQUIRED_COLUMNS = ['amount', 'customer_id', 'merchant_id'] as const;
export const OPTIONAL_COLUMNS = ['transaction_id', 'timestamp', 'location', 'payment_type', 'label'] as const;
export type DatasetColumn = (typeof REQUIRED_COLUMNS)[number] | (typeof OPTIONAL_COLUMNS)[number];
export const DATASET_COLUMNS: readonly DatasetColumn[] = [...REQUIRED_COLUMNS, ...OPTIONAL_COLUMNS];

/** Our column name → the file's header that holds it; `fields`: a field the organization declared
 *  (domain/fields.ts) → the header that holds its values (datasets/mapped-fields.ts reads them). */
export type ColumnMapping = Partial<Record<DatasetColumn, string>> & { fields?: Readonly<Record<string, string>> };

/** The mapped fields' entries (name, header), none when the mapping maps none. */
export function fieldEntries(mapping: ColumnMapping): [string, string][] {
  return mapping.fields ? Object.entries(mapping.fields) : [];
}
