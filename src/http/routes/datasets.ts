// Dataset endpoints: upload (a `text/csv` body or a multipart form with one file), one dataset, a
// preview of its first rows as parsed, re-validation with the caller's column mapping, and delete.
// The upload answers with the validation result: 201 when the file can be scored; 422
// `validation_failed` with the per-column problems (the dataset is kept, so a mapping can fix it);
// 400 `too_many_rows` or 422 for empty or binary files (not kept); 413 `payload_too_large`.
// An expired dataset answers 410 `upload_expired`; a deleted or unknown one 404. Every validation
// answered carries `suggested_mapping` (datasets/suggest.ts, from the headers), and the preview
// carries a few values per header, so a person can map a file from elsewhere without opening it.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { validateAndKeep } from '../../datasets/columns.ts';
import { suggestMapping } from '../../datasets/suggest.ts';
import { DATASET_COLUMNS, readRows, sampleValues, type ColumnMapping, type ValidateOptions, type ValidationResult } from '../../datasets/csv.ts';
import { getDataset, insertDataset, markRemoved, newDatasetId, updateValidation, UploadTooLarge, type DatasetRecord } from '../../storage/datasets.ts';
import type { Service } from '../../app/service.ts';
import { ApiError } from '../errors.ts';
import { newOwnership, visibleTo } from '../ownership.ts';
import { ErrorResponse } from '../schemas.ts';

const Mapping = z.partialRecord(z.enum(DATASET_COLUMNS as [string, ...string[]]), z.string().min(1).max(200)).describe('Our column name → the header in your file');
/** The mapping's JSON Schema, for the parameters that carry it as JSON text. */
const { $schema: _draft, ...MAPPING_JSON_SCHEMA } = z.toJSONSchema(Mapping) as Record<string, unknown>;
const Preview = z.object({
  id: z.string(),
  columns: z.record(z.string(), z.string().nullable()).describe('Our column → the header used, or null when absent'),
  columns_found: z.array(z.string()).describe("The file's headers, in file order"),
  valid: z.boolean(),
  rows: z.array(z.record(z.string(), z.unknown())).describe('The first rows as parsed with the dataset\'s mapping'),
  samples: z.record(z.string(), z.array(z.string())).describe('Header → up to 3 distinct non-empty values from the first 50 rows, as written (cut to 40 characters); read from the file, never stored'),
  suggested_mapping: Mapping.describe('Our column → the header that looks like it, from the header names alone (PaySim\'s nameOrig → customer_id, isFraud → label, …); a suggestion only, apply it with POST /api/datasets/{id}/validate'),
});
const DatasetParams = z.object({ id: z.string().min(1).max(100) });
const Anything = z.record(z.string(), z.unknown());
const errors = { 400: ErrorResponse, 404: ErrorResponse, 410: ErrorResponse, 413: ErrorResponse, 422: ErrorResponse };

function parseMappingText(text: string | undefined): ColumnMapping {
  if (text === undefined || text === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError(422, 'validation_failed', 'The column mapping is not valid JSON.', 'Send mapping as a JSON object, e.g. {"amount": "Amount", "customer_id": "nameOrig"}.', { fields: [{ path: 'mapping', message: 'not JSON' }] });
  }
  const parsed = Mapping.safeParse(value);
  if (!parsed.success) {
    throw new ApiError(422, 'validation_failed', 'The column mapping has unknown columns or empty names.', `Map only ${DATASET_COLUMNS.join(', ')} to header names.`, { fields: parsed.error.issues.map((i) => ({ path: ['mapping', ...i.path].join('.'), message: i.message })) });
  }
  return parsed.data as ColumnMapping;
}

/** A multipart form the parser could not read (no boundary, cut short, too many parts), as the
 *  client's error it is rather than a 500. */
function unreadableForm(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const code = (e as { code?: string }).code ?? '';
  if (/^FST_(FIELDS|PARTS|FILES)_LIMIT$/.test(code)) {
    return new ApiError(413, 'payload_too_large', 'The form has more parts than an upload takes.', 'Send a form with the one file field (and at most 10 other fields), or the CSV itself with Content-Type: text/csv.');
  }
  return new ApiError(400, 'bad_request', `The multipart form could not be read: ${String((e as Error).message ?? e).slice(0, 120)}.`, 'Send a well-formed multipart/form-data body with its boundary, or the CSV itself with Content-Type: text/csv.');
}

/** A validation as answered: as stored, with the mapping its headers suggest. */
function withSuggestion(v: ValidationResult): ValidationResult & { suggested_mapping: ColumnMapping } {
  return { ...v, suggested_mapping: suggestMapping(v.columns_found) };
}

export function describeDataset(d: DatasetRecord) {
  return {
    id: d.id,
    original_name: d.original_name,
    size_bytes: d.size_bytes,
    rows: d.rows,
    has_labels: d.has_labels,
    organization_id: d.organization_id,
    mapping: d.mapping,
    valid: d.validation.valid,
    validation: withSuggestion(d.validation),
    created_at: d.created_at.toISOString(),
    expires_at: d.expires_at.toISOString(),
  };
}

function invalid(validation: ValidationResult, datasetId: string | undefined): ApiError {
  const parts: string[] = [];
  if (validation.missing_required.length) parts.push(`missing required column${validation.missing_required.length > 1 ? 's' : ''} ${validation.missing_required.join(', ')}`);
  for (const p of validation.problems.slice(0, 3)) parts.push(`${p.header} ${p.message} in ${p.count} row${p.count > 1 ? 's' : ''} (first: ${p.rows.join(', ')})`);
  for (const p of validation.file_problems) parts.push(p.message);
  const suggested = withSuggestion(validation);
  const hint = Object.keys(suggested.suggested_mapping).length ? ` (suggested: ${JSON.stringify(suggested.suggested_mapping)})` : '';
  const fix = validation.file_problems[0]?.fix ?? validation.problems[0]?.fix ?? (validation.missing_required.length ? `Map your headers to ${validation.missing_required.join(', ')} with POST /api/datasets/${datasetId ?? '{id}'}/validate and a mapping${hint}, or rename them in the file.` : 'Correct the file and upload it again.');
  return new ApiError(422, 'validation_failed', `The file cannot be scored as it is: ${parts.join('; ')}.`, fix, { ...(datasetId ? { dataset_id: datasetId } : {}), validation: suggested });
}

/** A live dataset the caller may see, or the right error: 404 unknown, deleted or someone else's
 *  (ownership.ts), 410 expired. */
export async function liveDataset(service: Service, id: string, request: FastifyRequest): Promise<DatasetRecord> {
  const d = await getDataset(service.db, id);
  if (!d || d.removed === 'deleted' || !(await visibleTo(service, request, d))) throw new ApiError(404, 'not_found', `No dataset ${id}.`, 'Upload the file with POST /api/datasets/upload.');
  if (d.removed === 'expired' || d.expires_at.getTime() <= Date.now()) {
    if (!d.removed) {
      const stored = await markRemoved(service.db, d.id, 'expired');
      if (stored) await service.datasets.remove(stored);
    }
    throw new ApiError(410, 'upload_expired', `Dataset ${id} expired and its file was deleted (uploads are kept ${service.config.UPLOAD_RETENTION_HOURS} h).`, 'Upload the file again.');
  }
  return d;
}

/** Validation of a stored upload: in a job worker thread when jobs run here (not on this event
 *  loop), else in this thread (no model: nothing else needs the CPU). */
function validate(service: Service, path: string, options: ValidateOptions): Promise<ValidationResult> {
  return service.jobs ? service.jobs.validate(path, options) : validateAndKeep(path, options);
}

export function datasetRoutes(app: FastifyInstance, service: Service): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const maxBytes = service.config.MAX_UPLOAD_MB * 1024 * 1024;
  // A CSV body is streamed to disk as it arrives, never buffered whole.
  app.addContentTypeParser(['text/csv', 'application/csv'], (_request, payload, done) => done(null, payload));

  r.post('/api/datasets/upload', {
    config: {
      rateLimit: { max: service.config.UPLOAD_RATE_PER_MINUTE, timeWindow: 60_000 },
      documentedBody: {
        content: {
          'text/csv': { schema: { type: 'string', description: 'The CSV file itself, with a header line' } },
          'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary', description: 'The CSV file' } }, required: ['file'] } },
        },
      },
    },
    schema: {
      tags: ['datasets'],
      summary: 'Upload a CSV; returns the validation result',
      description: 'Send the file as the body with Content-Type: text/csv, or as the one file of a multipart/form-data form. An optional column mapping goes in the `mapping` query parameter as JSON. 201 when the file can be scored; 422 `validation_failed` lists what to fix (the dataset is kept so a mapping can fix it). Either way `validation.suggested_mapping` maps our columns to the headers that look like them (a suggestion, not applied).',
      querystring: z.object({
        // The text is JSON: the reference declares the object it must decode to (the parameter's
        // `content`), and parseMappingText enforces it with a reason per problem. No cap on the
        // text itself: the object's own bounds (eight known keys, headers of 1 to 200 characters)
        // limit it, and a cap on the encoding would refuse a valid mapping a client escapes.
        mapping: z
          .string()
          .optional()
          .meta({ ...MAPPING_JSON_SCHEMA, 'x-consume': 'application/json', description: 'Our column name → the header in your file, as JSON' }),
        filename: z.string().max(255).optional(),
        organization_id: z.string().min(1).max(100).optional().describe('Upload for an organization you belong to (signed in); its members can then use the dataset'),
      }),
      response: { 201: Anything, ...errors, 401: ErrorResponse, 415: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
    },
  }, async (request, reply) => {
    const mapping = parseMappingText(request.query.mapping);
    const ownership = await newOwnership(service, request, request.query.organization_id);
    let body: Readable;
    let originalName = request.query.filename ?? 'upload.csv';
    const type = String(request.headers['content-type'] ?? '');
    const multipart = type.startsWith('multipart/form-data');
    if (multipart) {
      // One byte over the limit, so that a file over it reaches save()'s check (413) rather than
      // being cut at the limit, silently, by the form parser.
      const part = await (request as FastifyRequest & { file: (o?: unknown) => Promise<{ file: Readable; filename: string } | undefined> })
        .file({ limits: { fileSize: maxBytes + 1, files: 1 } })
        .catch((e: unknown) => Promise.reject(unreadableForm(e)));
      if (!part) throw new ApiError(422, 'validation_failed', 'The form has no file.', 'Send the CSV as a file field of the form.', { fields: [{ path: 'file', message: 'missing' }] });
      body = part.file;
      originalName = part.filename || originalName;
    } else if (/^(text|application)\/csv/.test(type)) {
      body = request.body as Readable;
    } else {
      throw new ApiError(415, 'unsupported_media_type', `Content-Type ${type.slice(0, 80) || '(none)'} is not an upload.`, 'Send the file with Content-Type: text/csv, or as multipart/form-data.');
    }
    let saved: { storedName: string; size: number };
    try {
      saved = await service.datasets.save(body, maxBytes);
    } catch (e) {
      if (e instanceof UploadTooLarge || (e as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
        throw new ApiError(413, 'payload_too_large', `The file is larger than ${service.config.MAX_UPLOAD_MB} MB.`, `Split it into files of at most ${service.config.MAX_UPLOAD_MB} MB.`);
      }
      throw multipart ? unreadableForm(e) : e;
    }
    // Until the dataset is recorded the stored file is this request's: any failure removes it.
    let validation: ValidationResult;
    let record: DatasetRecord;
    try {
      validation = await validate(service, service.datasets.path(saved.storedName), { mapping, maxRows: service.config.MAX_DATASET_ROWS });
      const tooMany = validation.file_problems.find((p) => p.reason === 'too_many_rows');
      if (tooMany) throw new ApiError(400, 'too_many_rows', tooMany.message, tooMany.fix, { validation });
      if (validation.file_problems.some((p) => p.reason === 'validation_failed')) throw invalid(validation, undefined);
      record = await insertDataset(service.db, {
        id: newDatasetId(),
        original_name: originalName.replace(/[^\w.\- ]/g, '_').slice(0, 200),
        stored_name: saved.storedName,
        size_bytes: saved.size,
        rows: validation.rows,
        has_labels: validation.has_labels,
        mapping,
        validation,
        owner_user_id: ownership.owner_user_id,
        organization_id: ownership.organization_id,
        expires_at: new Date(Date.now() + service.config.UPLOAD_RETENTION_HOURS * 3_600_000),
      });
    } catch (e) {
      await service.datasets.remove(saved.storedName).catch(() => undefined);
      throw e;
    }
    if (!validation.valid) throw invalid(validation, record.id);
    return reply.code(201).send(describeDataset(record));
  });

  r.get('/api/datasets/:id', { schema: { tags: ['datasets'], summary: 'One uploaded dataset', params: DatasetParams, response: { 200: Anything, ...errors } } }, async (request) =>
    describeDataset(await liveDataset(service, request.params.id, request)),
  );

  r.get('/api/datasets/:id/preview', {
    schema: { tags: ['datasets'], summary: 'First rows as parsed (with the dataset\'s mapping), sample values per header and a suggested mapping', params: DatasetParams, querystring: z.object({ rows: z.coerce.number().int().min(1).max(100).default(20) }), response: { 200: Preview, ...errors } },
  }, async (request) => {
    const d = await liveDataset(service, request.params.id, request);
    const rows = [];
    for await (const row of readRows(service.datasets.path(d.stored_name), d.mapping)) {
      rows.push({ ...row, time: row.time === undefined || !Number.isFinite(row.time) ? null : new Date(row.time).toISOString(), label: row.label ?? null });
      if (rows.length >= request.query.rows) break;
    }
    const samples = await sampleValues(service.datasets.path(d.stored_name), { rows: 50, perHeader: 3 });
    return { id: d.id, columns: d.validation.columns, columns_found: d.validation.columns_found, valid: d.validation.valid, rows, samples, suggested_mapping: suggestMapping(d.validation.columns_found) };
  });

  r.post('/api/datasets/:id/validate', {
    schema: { tags: ['datasets'], summary: 'Re-check, optionally with your own column mapping', params: DatasetParams, body: z.object({ mapping: Mapping.optional() }).strict().optional(), response: { 200: Anything, ...errors } },
  }, async (request) => {
    const d = await liveDataset(service, request.params.id, request);
    const mapping = (request.body?.mapping ?? d.mapping) as ColumnMapping;
    const validation = await validate(service, service.datasets.path(d.stored_name), { mapping, maxRows: service.config.MAX_DATASET_ROWS });
    const updated = await updateValidation(service.db, d.id, mapping, validation);
    if (!validation.valid) throw invalid(validation, d.id);
    return describeDataset(updated);
  });

  r.delete('/api/datasets/:id', { schema: { tags: ['datasets'], summary: 'Delete an upload immediately', params: DatasetParams, response: { 204: z.null().describe('Deleted'), 404: ErrorResponse, 410: ErrorResponse } } }, async (request, reply) => {
    const d = await liveDataset(service, request.params.id, request);
    const stored = await markRemoved(service.db, d.id, 'deleted');
    if (stored) await service.datasets.remove(stored);
    return reply.code(204).send(null);
  });
}
