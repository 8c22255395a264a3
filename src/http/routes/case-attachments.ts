// Files on cases (`…/cases/{case_id}/attachments`, session and CSRF): a member uploads one file as a
// multipart form, at most 5 MB, and downloads it. The form parser is registered in a context of
// its own, as the dataset upload's is, so every other route still answers a form with 415. A
// download is always opaque bytes to save (`Content-Disposition: attachment`,
// `application/octet-stream`, `nosniff`): a browser never renders or runs what a member attached.
// The use cases are app/cases/attachments.ts's.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import formParser from '@fastify/multipart';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { App } from '../../app/app.ts';
import { attachmentTooLarge } from '../../app/cases/attachments.ts';
import { Attachment, MAX_ATTACHMENT_BYTES } from '../../contract/case-attachments.ts';
import { ErrorResponse } from '../../contract/errors.ts';
import { ApiError } from '../errors.ts';
import { memberCaller } from '../ownership.ts';
import { OrgParams } from '../records.ts';
import { attachment } from './jobs.ts';

const errors = {
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  404: ErrorResponse,
  409: ErrorResponse,
  413: ErrorResponse,
  415: ErrorResponse,
  422: ErrorResponse,
  503: ErrorResponse,
};
const CaseParams = OrgParams.extend({ case_id: z.string().min(1).max(100) });
type Door = Pick<App, 'sessions' | 'organizations' | 'cases'>;

/** The form part's file name as the browser meant it (raw UTF-8 bytes read as Latin-1 by the
 *  parser), as the dataset upload reads it. */
function utf8Name(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range from NUL is all of Latin-1, what this tells apart
  if (!/[\u0080-\u00ff]/.test(name) || /[^\u0000-\u00ff]/.test(name)) return name;
  const decoded = Buffer.from(name, 'latin1').toString('utf8');
  return decoded.includes('\ufffd') ? name : decoded;
}

export function caseAttachmentRoutes(server: FastifyInstance, app: Door): void {
  server.register(async (uploads) => {
    // The name as sent (`preservePath`): the parser would otherwise cut a path down to its last
    // part, and a name like a path is refused rather than quietly made into another name.
    await uploads.register(formParser, { preservePath: true, limits: { fileSize: MAX_ATTACHMENT_BYTES, files: 1, fields: 5, parts: 6 } });
    uploads.withTypeProvider<ZodTypeProvider>().post(
      '/api/organizations/:id/cases/:case_id/attachments',
      {
        config: {
          documentedBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  properties: { file: { type: 'string', format: 'binary', description: 'The file, at most 5 MB' } },
                  required: ['file'],
                },
              },
            },
          },
        },
        schema: {
          tags: ['cases'],
          summary: 'Attach a file to a case',
          description:
            'One file as a multipart form, at most 5 MB (413 `payload_too_large`). It is stored under a random id, never under its name; the name is kept as display text and refused (422 `validation_failed`) with a path separator, `..` or a control character. The timeline records its name, size and SHA-256. A closed case takes none (409 `case_closed`).',
          params: CaseParams,
          response: { 201: Attachment, ...errors },
        },
      },
      async (request, reply) => {
        const caller = await memberCaller(app, request, request.params.id);
        if (!String(request.headers['content-type'] ?? '').startsWith('multipart/form-data'))
          throw new ApiError(
            'unsupported_media_type',
            'An attachment is sent as a multipart form.',
            'Send multipart/form-data with the file in its `file` field.',
          );
        let part: { file: Readable; filename: string; toBuffer(): Promise<Buffer> } | undefined;
        let content: Buffer;
        try {
          part = await (request as FastifyRequest & { file: () => Promise<typeof part> }).file();
          if (!part)
            throw new ApiError('validation_failed', 'The form has no file.', 'Send the file as a file field of the form.', {
              fields: [{ path: 'file', message: 'missing' }],
            });
          content = await part.toBuffer();
        } catch (e) {
          if ((e as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw attachmentTooLarge();
          if (e instanceof ApiError) throw e;
          throw new ApiError(
            'bad_request',
            `The multipart form could not be read: ${String((e as Error).message ?? e).slice(0, 120)}.`,
            'Send a well-formed multipart/form-data body with one file.',
          );
        }
        const added = await app.cases.attach(caller, request.params.case_id, { name: utf8Name(part.filename ?? ''), content });
        reply.code(201);
        return added;
      },
    );
  });

  server.withTypeProvider<ZodTypeProvider>().get(
    '/api/organizations/:id/cases/:case_id/attachments/:attachment_id',
    {
      config: {
        documentedResponses: {
          200: {
            description: 'The file as it was attached, to save: never rendered or run by a browser.',
            headers: {
              'content-disposition': { schema: { type: 'string' }, description: 'attachment; filename="<its name>"' },
              'x-content-type-options': { schema: { type: 'string' }, description: 'nosniff' },
            },
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          },
        },
      },
      schema: {
        tags: ['cases'],
        summary: "Download a case's attachment",
        params: CaseParams.extend({ attachment_id: z.string().min(1).max(100) }),
        response: { 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) => {
      const caller = await memberCaller(app, request, request.params.id);
      const { attachment: a, content } = await app.cases.attachment(caller, request.params.case_id, request.params.attachment_id);
      reply.header('content-type', 'application/octet-stream');
      reply.header('content-disposition', attachment(a.name));
      reply.header('x-content-type-options', 'nosniff');
      reply.header('cache-control', 'private, no-store');
      return reply.send(content as never);
    },
  );
}
