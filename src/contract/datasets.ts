// Datasets: the uploaded CSV files a job scores or a history import stores. What their routes
// answer (an upload with its validation, a preview of its rows), the format GET /api/datasets/format
// documents, and the built-in example's figures (GET /api/datasets/example, also the file
// app/sandbox.ts keeps them in between starts).
// An upload's routes document it only as "an object" (its validation is the check's own record,
// datasets/csv.ts); `Dataset` says what it holds, and the function that shapes it
// (app/datasets/datasets.ts, datasetView) is held to it by the compiler.

import { z } from 'zod';
import { DATASET_COLUMNS, type ColumnMapping, type DatasetColumn } from '../datasets/column-names.ts';
import type { ParsedRow, ValidationResult } from '../datasets/csv.ts';
import { MAX_SENT_FIELDS } from '../domain/fields.ts';
import { FieldName } from './custom-fields.ts';

const Count = z.number().int().nonnegative();

const Header = z.string().min(1).max(200);
export const Mapping = z
  .object({
    ...(Object.fromEntries(DATASET_COLUMNS.map((c) => [c, Header.optional()])) as Record<DatasetColumn, z.ZodOptional<typeof Header>>),
    fields: z
      .record(FieldName, Header)
      .refine((f) => Object.keys(f).length <= MAX_SENT_FIELDS, `at most ${MAX_SENT_FIELDS} fields`)
      .optional()
      .describe(
        "Your organization's declared field → the header in your file that holds its values. A history import stores them with each row (converted to the field's type; an empty cell: the row does not carry it); a field must be declared by the organization when the import or scoring job is queued",
      ),
  })
  .strict()
  .describe('Our column name → the header in your file; `fields`: your own declared fields → their headers');
export type Mapping = z.infer<typeof Mapping>;

/** What the upload's routes document (the upload's 201, `GET /api/datasets/{id}`, `POST …/validate`): an object. */
export const DatasetObject = z.record(z.string(), z.unknown());
/** What the check found (a dataset's `validation`, and `detail.validation` of a 422 `validation_failed`
 *  upload): the stored validation, with the mapping its headers suggest. */
export type DatasetValidation = ValidationResult & { suggested_mapping: ColumnMapping };
/** An upload as its routes answer it (DatasetObject). */
export type Dataset = {
  id: string;
  original_name: string;
  size_bytes: number;
  rows: number;
  has_labels: boolean;
  organization_id: string | null;
  mapping: ColumnMapping;
  valid: boolean;
  validation: DatasetValidation;
  created_at: string;
  expires_at: string;
};

export const Preview = z.object({
  id: z.string(),
  columns: z.record(z.string(), z.string().nullable()).describe('Our column → the header used, or null when absent'),
  columns_found: z.array(z.string()).describe("The file's headers, in file order"),
  valid: z.boolean(),
  rows: z.array(z.record(z.string(), z.unknown())).describe("The first rows as parsed with the dataset's mapping"),
  samples: z
    .record(z.string(), z.array(z.string()))
    .describe('Header → up to 3 distinct non-empty values from the first 50 rows, as written (cut to 40 characters); read from the file, never stored'),
  suggested_mapping: Mapping.describe(
    "Our column → the header that looks like it, from the header names alone (PaySim's nameOrig → customer_id, isFraud → label, …); a suggestion only, apply it with POST /api/datasets/{id}/validate",
  ),
});
/** A row of the preview as parsed with the dataset's mapping: its time in ISO 8601, null without a
 *  timestamp column (or a time that is not one), and its label null without a label column. */
export type PreviewRow = Omit<ParsedRow, 'time' | 'label'> & { time: string | null; label: 0 | 1 | null };
/** The preview; its schema says each row is an object, and this says which. */
export type Preview = Omit<z.infer<typeof Preview>, 'rows'> & { rows: PreviewRow[] };

const FormatColumn = z.object({ name: z.string(), type: z.string().describe('number, string or integer'), rule: z.string() });
export const DatasetFormat = z.object({
  required: z.array(FormatColumn),
  optional: z.array(FormatColumn),
  column_mapping: z.string(),
  encoding: z.string(),
  limits: z.object({ max_upload_mb: Count, max_dataset_rows: Count }),
});
export type DatasetFormat = z.infer<typeof DatasetFormat>;

/** What `GET /api/datasets/example` answers: the example's figures and how to make it. */
export const ExampleDataset = z.object({
  name: z.string(),
  description: z.string(),
  rows: Count,
  fraud_rows: Count,
  fraud_rate: z.number().min(0).max(1),
  columns: z.array(z.string()),
  customers: Count,
  merchants: Count,
  days: Count,
  seed: z.number().int(),
  scenarios: z.record(z.string(), Count).describe('Scenario → its fraud rows'),
  generate_with: z.string().describe('The command that writes the same file'),
  first_transaction_at: z.string().describe('The simulated period (ISO 8601)'),
  last_transaction_at: z.string(),
  sandbox_as_of: z.string().describe('The moment sandbox scores are made at (ISO 8601)'),
});
export type ExampleDataset = z.infer<typeof ExampleDataset>;
