// The dataset use cases: keep an upload and record it with its validation, read a dataset the
// caller may see (unknown, deleted or someone else's is `not_found`, app/access/ownership.ts; expired is
// `gone` and its file is deleted then), preview its first rows, re-validate it with a column
// mapping, delete it. A dataset is answered as the contract's `Dataset` (`datasetView`, one
// definition for every route that answers with one). An upload that can be scored is recorded; one with per-column problems is
// recorded too (a mapping can fix it) and refused `validation_failed`; an empty or binary file, or
// one with too many rows, is refused and not kept. Every validation answered carries
// `suggested_mapping` (datasets/suggest.ts, from the headers), and the preview a few values per
// header, so a person can map a file from elsewhere without opening it.

import type { Readable } from 'node:stream';
import type { Config } from '../../config.ts';
import { validateAndKeep } from '../../datasets/columns.ts';
import { readRows, sampleValues, type ColumnMapping, type ValidateOptions, type ValidationResult } from '../../datasets/csv.ts';
import { suggestMapping } from '../../datasets/suggest.ts';
import type { Queryable } from '../../storage/db.ts';
import {
  getDataset,
  insertDataset,
  markRemoved,
  newDatasetId,
  updateValidation,
  UploadTooLarge,
  type DatasetFiles,
  type DatasetRecord,
} from '../../storage/datasets.ts';
import { AppError } from '../errors.ts';
import { visibleTo, type Owned } from '../access/ownership.ts';
import type { Dataset, DatasetValidation, Preview, PreviewRow } from '../../contract/datasets.ts';

/** What reading a dataset needs. */
export interface DatasetStore {
  db: Queryable;
  datasets: DatasetFiles;
  config: Pick<Config, 'UPLOAD_RETENTION_HOURS'>;
}

/** What uploading and validating need besides: the limits, and the job worker threads, when jobs
 *  run here, to validate in. */
export interface DatasetDeps extends DatasetStore {
  config: Pick<Config, 'UPLOAD_RETENTION_HOURS' | 'MAX_UPLOAD_MB' | 'MAX_DATASET_ROWS'>;
  jobs: { validate(path: string, options: ValidateOptions): Promise<ValidationResult> } | undefined;
}

/** An uploaded file kept under a new name, not yet a dataset. */
export interface StoredUpload {
  storedName: string;
  size: number;
}

/** A validation as answered: as stored, with the mapping its headers suggest. */
export function describeValidation(v: ValidationResult): DatasetValidation {
  return { ...v, suggested_mapping: suggestMapping(v.columns_found) };
}

/** A dataset as the API answers it: the record, with its validation as answered. */
export function datasetView(d: DatasetRecord): Dataset {
  return {
    id: d.id,
    original_name: d.original_name,
    size_bytes: d.size_bytes,
    rows: d.rows,
    has_labels: d.has_labels,
    organization_id: d.organization_id,
    mapping: d.mapping,
    valid: d.validation.valid,
    validation: describeValidation(d.validation),
    created_at: d.created_at.toISOString(),
    expires_at: d.expires_at.toISOString(),
  };
}

/** `validation_failed` for a file that cannot be scored, saying what to fix (with the dataset's id
 *  when it is kept). */
function invalid(validation: ValidationResult, datasetId: string | undefined): AppError {
  const parts: string[] = [];
  if (validation.missing_required.length)
    parts.push(`missing required column${validation.missing_required.length > 1 ? 's' : ''} ${validation.missing_required.join(', ')}`);
  const missingFields = validation.missing_fields ?? [];
  if (missingFields.length)
    parts.push(`no column for the mapped field${missingFields.length > 1 ? 's' : ''} ${missingFields.map((f) => `fields.${f}`).join(', ')}`);
  for (const p of validation.problems.slice(0, 3))
    parts.push(`${p.header} ${p.message} in ${p.count} row${p.count > 1 ? 's' : ''} (first: ${p.rows.join(', ')})`);
  // A file problem's message is a sentence of its own: its full stop goes, the list ends with one.
  for (const p of validation.file_problems) parts.push(p.message.replace(/\.$/, ''));
  const suggested = describeValidation(validation);
  const hint = Object.keys(suggested.suggested_mapping).length ? ` (suggested: ${JSON.stringify(suggested.suggested_mapping)})` : '';
  const fix =
    validation.file_problems[0]?.fix ??
    validation.problems[0]?.fix ??
    (validation.missing_required.length
      ? `Map your headers to ${validation.missing_required.join(', ')} with POST /api/datasets/${datasetId ?? '{id}'}/validate and a mapping${hint}, or rename them in the file.`
      : missingFields.length
        ? `Map each field to a header your file has (its columns: validation.columns_found), or leave it out of the mapping, with POST /api/datasets/${datasetId ?? '{id}'}/validate.`
        : 'Correct the file and upload it again.');
  return new AppError('validation_failed', `The file cannot be scored as it is: ${parts.join('; ')}.`, fix, {
    ...(datasetId ? { dataset_id: datasetId } : {}),
    validation: suggested,
  });
}

/** The most bytes an upload may have (MAX_UPLOAD_MB). */
export function maxUploadBytes(config: Pick<Config, 'MAX_UPLOAD_MB'>): number {
  return config.MAX_UPLOAD_MB * 1024 * 1024;
}

/** `payload_too_large`: a file over MAX_UPLOAD_MB. */
export function uploadTooLarge(config: Pick<Config, 'MAX_UPLOAD_MB'>): AppError {
  return new AppError('payload_too_large', `The file is larger than ${config.MAX_UPLOAD_MB} MB.`, `Split it into files of at most ${config.MAX_UPLOAD_MB} MB.`);
}

/** A live dataset the caller (signed in as `userId`, or a guest) may see: `not_found` when unknown,
 *  deleted or someone else's (ownership.ts), `gone` when expired (its file deleted then, if the
 *  retention sweep has not yet). */
export async function liveDataset(deps: DatasetStore, id: string, userId: string | undefined): Promise<DatasetRecord> {
  const d = await getDataset(deps.db, id);
  if (!d || d.removed === 'deleted' || !(await visibleTo(deps.db, userId, d)))
    throw new AppError('not_found', `No dataset ${id}.`, 'Upload the file with POST /api/datasets/upload.');
  if (d.removed === 'expired' || d.expires_at.getTime() <= Date.now()) {
    if (!d.removed) {
      const stored = await markRemoved(deps.db, d.id, 'expired');
      if (stored) await deps.datasets.remove(stored);
    }
    throw new AppError(
      'upload_expired',
      `Dataset ${id} expired and its file was deleted (uploads are kept ${deps.config.UPLOAD_RETENTION_HOURS} h).`,
      'Upload the file again.',
    );
  }
  return d;
}

/** A live dataset the caller may see, as answered (`not_found` and `gone` as for liveDataset). */
export async function readDataset(deps: DatasetStore, id: string, userId: string | undefined): Promise<Dataset> {
  return datasetView(await liveDataset(deps, id, userId));
}

/** Validation of a stored upload: in a job worker thread when jobs run here (not on this event
 *  loop), else in this thread (no model: nothing else needs the CPU). */
function validate(deps: DatasetDeps, storedName: string, mapping: ColumnMapping): Promise<ValidationResult> {
  const path = deps.datasets.path(storedName);
  const options = { mapping, maxRows: deps.config.MAX_DATASET_ROWS };
  return deps.jobs ? deps.jobs.validate(path, options) : validateAndKeep(path, options);
}

/** Streams an upload's body to a new file, as it arrives (never buffered whole), refusing
 *  `payload_too_large` past MAX_UPLOAD_MB. Other failures of the body are the caller's to name. */
export async function storeUpload(deps: Pick<DatasetDeps, 'datasets' | 'config'>, body: Readable): Promise<StoredUpload> {
  try {
    return await deps.datasets.save(body, maxUploadBytes(deps.config));
  } catch (e) {
    if (e instanceof UploadTooLarge) throw uploadTooLarge(deps.config);
    throw e;
  }
}

/** An upload's name as it is kept and shown: letters and digits of any script (NFC), and `.`, `-`,
 *  `_` and spaces; anything else (path separators, quotes, control characters) becomes `_`, so the
 *  name is text only, never a path, and safe in a quoted header. At most 200 characters. */
export function displayName(sent: string): string {
  return [...sent.normalize('NFC').replace(/[^\p{L}\p{M}\p{N}_.\- ]/gu, '_')].slice(0, 200).join('');
}

/** Validates a stored upload and records it as a dataset of `ownership`. Too many rows
 *  (`too_many_rows`) or a file that is no CSV at all is refused and not kept; one with problems a
 *  mapping can fix is kept and refused `validation_failed` with its id. */
export async function uploadDataset(
  deps: DatasetDeps,
  stored: StoredUpload,
  upload: { originalName: string; mapping: ColumnMapping; ownership: Owned },
): Promise<Dataset> {
  // Until the dataset is recorded the stored file is this request's: any failure removes it.
  let validation: ValidationResult;
  let record: DatasetRecord;
  try {
    validation = await validate(deps, stored.storedName, upload.mapping);
    const tooMany = validation.file_problems.find((p) => p.reason === 'too_many_rows');
    if (tooMany) throw new AppError('too_many_rows', tooMany.message, tooMany.fix, { validation });
    if (validation.file_problems.some((p) => p.reason === 'validation_failed')) throw invalid(validation, undefined);
    record = await insertDataset(deps.db, {
      id: newDatasetId(),
      original_name: displayName(upload.originalName),
      stored_name: stored.storedName,
      size_bytes: stored.size,
      rows: validation.rows,
      has_labels: validation.has_labels,
      mapping: upload.mapping,
      validation,
      owner_user_id: upload.ownership.owner_user_id,
      organization_id: upload.ownership.organization_id,
      expires_at: new Date(Date.now() + deps.config.UPLOAD_RETENTION_HOURS * 3_600_000),
    });
  } catch (e) {
    await deps.datasets.remove(stored.storedName).catch(() => undefined);
    throw e;
  }
  if (!validation.valid) throw invalid(validation, record.id);
  return datasetView(record);
}

/** A dataset's preview: its first `rows` rows as parsed with its mapping, a few values per header
 *  read from the file (never stored), and the mapping its headers suggest. */
export async function previewDataset(deps: DatasetStore, id: string, userId: string | undefined, rowCount: number): Promise<Preview> {
  const d = await liveDataset(deps, id, userId);
  const rows: PreviewRow[] = [];
  for await (const row of readRows(deps.datasets.path(d.stored_name), d.mapping)) {
    rows.push({ ...row, time: row.time === undefined || !Number.isFinite(row.time) ? null : new Date(row.time).toISOString(), label: row.label ?? null });
    if (rows.length >= rowCount) break;
  }
  const samples = await sampleValues(deps.datasets.path(d.stored_name), { rows: 50, perHeader: 3 });
  return {
    id: d.id,
    columns: d.validation.columns,
    columns_found: d.validation.columns_found,
    valid: d.validation.valid,
    rows,
    samples,
    suggested_mapping: suggestMapping(d.validation.columns_found),
  };
}

/** Re-checks a dataset with `mapping` (its own when none is given) and stores the result;
 *  `validation_failed` when it still cannot be scored (the new mapping is kept all the same). */
export async function revalidateDataset(deps: DatasetDeps, id: string, userId: string | undefined, mapping: ColumnMapping | undefined): Promise<Dataset> {
  const d = await liveDataset(deps, id, userId);
  const use = mapping ?? d.mapping;
  const validation = await validate(deps, d.stored_name, use);
  const updated = await updateValidation(deps.db, d.id, use, validation);
  if (!validation.valid) throw invalid(validation, d.id);
  return datasetView(updated);
}

/** Deletes a dataset the caller may see, its file at once. */
export async function deleteDataset(deps: DatasetStore, id: string, userId: string | undefined): Promise<void> {
  const d = await liveDataset(deps, id, userId);
  const stored = await markRemoved(deps.db, d.id, 'deleted');
  if (stored) await deps.datasets.remove(stored);
}
