// Dataset endpoints: upload (a `text/csv` body or a multipart form with one file), one dataset, a
// preview of its first rows as parsed, re-validation with the caller's column mapping, and delete.
// The use cases are app/datasets/datasets.ts's and answer in the contract's shapes; here the request
// is read and their answer sent. The upload answers with the validation result: 201 when the file
// can be scored; 422 `validation_failed` with the per-column problems (the dataset is kept, so a
// mapping can fix it); 400 `too_many_rows` or 422 for empty or binary files (not kept); 413
// `payload_too_large`. An expired dataset answers 410 `upload_expired`; a deleted or unknown one 404.
// The upload is the one route that reads a body other than JSON: its CSV parser and the multipart
// form parser are registered in a context of its own, so every other route answers a CSV, a form
// or plain text with 415 `unsupported_media_type` rather than trying it as JSON. Its reference says
// what it needs: a CSV body of at least one character, or a form with its `file` part.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import formParser from '@fastify/multipart';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { DATASET_COLUMNS, type ColumnMapping } from '../../datasets/csv.ts';
import { maxUploadBytes, uploadTooLarge, type StoredUpload } from '../../app/datasets/datasets.ts';
import { AppError } from '../../app/errors.ts';
import type { App } from '../../app/app.ts';
import { DatasetObject, Mapping, Preview } from '../../contract/datasets.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { ApiError } from '../errors.ts';
import { newOwnership } from '../ownership.ts';
import { deadline } from '../deadlines.ts';

/** The mapping's JSON Schema, for the parameters that carry it as JSON text. */
const { $schema: _draft, ...MAPPING_JSON_SCHEMA } = z.toJSONSchema(Mapping) as Record<string, unknown>;
const DatasetParams = z.object({ id: z.string().min(1).max(100) });
const errors = { 400: ErrorResponse, 404: ErrorResponse, 410: ErrorResponse, 413: ErrorResponse, 422: ErrorResponse };

function parseMappingText(text: string | undefined): ColumnMapping {
  if (text === undefined || text === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError(
      'validation_failed',
      'The column mapping is not valid JSON.',
      'Send mapping as a JSON object, e.g. {"amount": "Amount", "customer_id": "nameOrig"}.',
      { fields: [{ path: 'mapping', message: 'not JSON' }] },
    );
  }
  const parsed = Mapping.safeParse(value);
  if (!parsed.success) {
    throw new ApiError(
      'validation_failed',
      'The column mapping has unknown columns, empty names or fields that cannot be field names.',
      `Map only ${DATASET_COLUMNS.join(', ')} to header names, and your declared fields under "fields" ({"fields": {"email_domain": "Email Domain"}}).`,
      { fields: parsed.error.issues.map((i) => ({ path: ['mapping', ...i.path].join('.'), message: i.message })) },
    );
  }
  return parsed.data as ColumnMapping;
}

/** A multipart form the parser could not read (no boundary, cut short, too many parts), as the
 *  client's error it is rather than a 500. */
function unreadableForm(e: unknown): Error {
  if (e instanceof AppError) return e;
  const code = (e as { code?: string }).code ?? '';
  if (/^FST_(FIELDS|PARTS|FILES)_LIMIT$/.test(code)) {
    return new ApiError(
      'payload_too_large',
      'The form has more parts than an upload takes.',
      'Send a form with the one file field (and at most 10 other fields), or the CSV itself with Content-Type: text/csv.',
    );
  }
  return new ApiError(
    'bad_request',
    `The multipart form could not be read: ${String((e as Error).message ?? e).slice(0, 120)}.`,
    'Send a well-formed multipart/form-data body with its boundary, or the CSV itself with Content-Type: text/csv.',
  );
}

type Door = Pick<App, 'config' | 'sessions' | 'organizations' | 'datasets'>;

export function datasetRoutes(server: FastifyInstance, app: Door): void {
  const r = server.withTypeProvider<ZodTypeProvider>();
  /** The caller the use cases decide visibility for: signed in, or a guest. */
  const caller = (request: FastifyRequest) => request.signedIn?.user.id;
  // Registered now, loaded once the caller's surface has its hooks (which it inherits).
  server.register(async (uploads) => {
    // A CSV body is streamed to disk as it arrives, never buffered whole.
    uploads.addContentTypeParser(['text/csv', 'application/csv'], (_request, payload, done) => done(null, payload));
    await uploads.register(formParser, { limits: { fileSize: app.config.MAX_UPLOAD_MB * 1024 * 1024, files: 1, fields: 10 } });
    uploadRoute(uploads, app);
  });

  r.get(
    '/api/datasets/:id',
    { schema: { tags: ['datasets'], summary: 'One uploaded dataset', params: DatasetParams, response: { 200: DatasetObject, ...errors } } },
    async (request) => app.datasets.one(request.params.id, caller(request)),
  );

  r.get(
    '/api/datasets/:id/preview',
    {
      schema: {
        tags: ['datasets'],
        summary: "First rows as parsed (with the dataset's mapping), sample values per header and a suggested mapping",
        params: DatasetParams,
        querystring: z.object({ rows: z.coerce.number().int().min(1).max(100).default(20) }),
        response: { 200: Preview, ...errors },
      },
    },
    async (request) => app.datasets.preview(request.params.id, caller(request), request.query.rows),
  );

  r.post(
    '/api/datasets/:id/validate',
    {
      schema: {
        tags: ['datasets'],
        summary: 'Re-check, optionally with your own column mapping',
        params: DatasetParams,
        body: z.object({ mapping: Mapping.optional() }).strict().optional(),
        response: { 200: DatasetObject, ...errors },
      },
    },
    async (request) => app.datasets.revalidate(request.params.id, caller(request), request.body?.mapping as ColumnMapping | undefined),
  );

  r.delete(
    '/api/datasets/:id',
    {
      schema: {
        tags: ['datasets'],
        summary: 'Delete an upload immediately',
        params: DatasetParams,
        response: { 204: z.null().describe('Deleted'), 404: ErrorResponse, 410: ErrorResponse },
      },
    },
    async (request, reply) => {
      await app.datasets.remove(request.params.id, caller(request));
      return reply.code(204).send(null);
    },
  );
}

/** A form part's file name as the browser meant it. Browsers send it as raw UTF-8 bytes in the
 *  part's header, which the form parser reads as Latin-1 (one character per byte); read back as
 *  UTF-8 when those bytes are valid UTF-8. A name sent as RFC 5987 `filename*` arrives decoded
 *  already, and its bytes are then not valid UTF-8, so it is kept. */
function utf8Name(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range from NUL is all of Latin-1, what this tells apart
  if (!/[\u0080-\u00ff]/.test(name) || /[^\u0000-\u00ff]/.test(name)) return name;
  const decoded = Buffer.from(name, 'latin1').toString('utf8');
  return decoded.includes('\ufffd') ? name : decoded;
}

/** `POST /api/datasets/upload`, in the context where a CSV body and a form can be read. */
function uploadRoute(server: FastifyInstance, app: Door): void {
  const maxBytes = maxUploadBytes(app.config);
  server.withTypeProvider<ZodTypeProvider>().post(
    '/api/datasets/upload',
    {
      config: {
        ...deadline('transfer'),
        rateLimit: { max: app.config.UPLOAD_RATE_PER_MINUTE, timeWindow: 60_000 },
        // Required, in either form: an empty body, or a form without its file, is 422.
        documentedBody: {
          required: true,
          content: {
            'text/csv': { schema: { type: 'string', minLength: 1, description: 'The CSV file itself, with a header line' } },
            'multipart/form-data': {
              schema: {
                type: 'object',
                properties: { file: { type: 'string', format: 'binary', minLength: 1, description: 'The CSV file' } },
                required: ['file'],
              },
            },
          },
        },
      },
      schema: {
        tags: ['datasets'],
        summary: 'Upload a CSV; returns the validation result',
        description:
          'Send the file as the body with Content-Type: text/csv, or as the one file of a multipart/form-data form. An optional column mapping goes in the `mapping` query parameter as JSON. 201 when the file can be scored; 422 `validation_failed` lists what to fix (the dataset is kept so a mapping can fix it). Either way `validation.suggested_mapping` maps our columns to the headers that look like them (a suggestion, not applied).',
        querystring: z.object({
          // The text is JSON: the reference declares the object it must decode to (the parameter's
          // `content`), and parseMappingText enforces it with a reason per problem. No cap on the
          // text itself: the object's own bounds (eight known keys and at most 50 fields, headers of
          // 1 to 200 characters) limit it, and a cap on the encoding would refuse a valid mapping a
          // client escapes.
          mapping: z
            .string()
            .optional()
            .meta({
              ...MAPPING_JSON_SCHEMA,
              'x-consume': 'application/json',
              description: 'Our column name → the header in your file, and `fields`: your declared field → its header, as JSON',
            }),
          filename: z.string().max(255).optional(),
          organization_id: z
            .string()
            .min(1)
            .max(100)
            .optional()
            .describe('Upload for an organization you belong to (signed in); its members can then use the dataset'),
        }),
        response: { 201: DatasetObject, ...errors, 401: ErrorResponse, 415: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) => {
      const mapping = parseMappingText(request.query.mapping);
      const ownership = await newOwnership(app, request, request.query.organization_id);
      let body: Readable;
      let originalName = request.query.filename ?? 'upload.csv';
      const type = String(request.headers['content-type'] ?? '');
      const multipart = type.startsWith('multipart/form-data');
      if (multipart) {
        // One byte over the limit, so that a file over it reaches storeUpload's check (413) rather than
        // being cut at the limit, silently, by the form parser.
        const part = await (request as FastifyRequest & { file: (o?: unknown) => Promise<{ file: Readable; filename: string } | undefined> })
          .file({ limits: { fileSize: maxBytes + 1, files: 1 } })
          .catch((e: unknown) => Promise.reject(unreadableForm(e)));
        if (!part)
          throw new ApiError('validation_failed', 'The form has no file.', 'Send the CSV as a file field of the form.', {
            fields: [{ path: 'file', message: 'missing' }],
          });
        body = part.file;
        originalName = utf8Name(part.filename) || originalName;
      } else if (/^(text|application)\/csv/.test(type)) {
        body = request.body as Readable;
      } else {
        throw new ApiError(
          'unsupported_media_type',
          `Content-Type ${type.slice(0, 80) || '(none)'} is not an upload.`,
          'Send the file with Content-Type: text/csv, or as multipart/form-data.',
        );
      }
      let stored: StoredUpload;
      try {
        stored = await app.datasets.store(body);
      } catch (e) {
        if ((e as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw uploadTooLarge(app.config);
        throw multipart ? unreadableForm(e) : e;
      }
      return reply.code(201).send(await app.datasets.record(stored, { originalName, mapping, ownership }));
    },
  );
}
