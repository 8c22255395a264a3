// Errors as the specification shapes them: `{"detail": {"message", "reason", "fix", ...}}` with a
// reason code of REASONS below (docs/api.md, Errors), on every error the service answers, including Fastify's own
// (malformed JSON, oversized body, unknown route, wrong content type) and zod's validation failures
// (422 with `detail.fields`). A 500 says nothing about what failed; the detail goes to the log.

import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';

export const REASONS = [
  'validation_failed', 'bad_request', 'not_signed_in', 'invalid_api_key', 'csrf_failed', 'forbidden', 'not_found',
  'job_not_finished', 'upload_expired', 'payload_too_large', 'too_many_rows', 'rate_limited', 'job_quota_exceeded',
  'auth_not_configured', 'model_unavailable', 'evaluation_unavailable', 'not_implemented', 'internal_error',
  'duplicate_transaction',
] as const;
export type Reason = (typeof REASONS)[number];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: Reason,
    message: string,
    readonly fix: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function errorBody(reason: Reason, message: string, fix: string, extra: Record<string, unknown> = {}) {
  return { detail: { message, reason, fix, ...extra } };
}

export function sendError(reply: FastifyReply, e: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
  return reply.code(e.status).send(errorBody(e.reason, e.message, e.fix, e.extra));
}

interface ZodIssueLike {
  instancePath?: string;
  message?: string;
  params?: { issue?: { path?: (string | number)[]; message?: string } };
}

/** `detail.fields`: one `{ path, message }` per problem, `path` dotted from the part's root. */
function fieldsOf(err: FastifyError & { validation?: ZodIssueLike[]; validationContext?: string }): { path: string; message: string }[] {
  return ((err.validation ?? []) as unknown as ZodIssueLike[]).map((v) => {
    const path = v.params?.issue?.path ?? (v.instancePath ?? '').split('/').filter(Boolean);
    return { path: [err.validationContext ?? 'body', ...path].join('.'), message: v.params?.issue?.message ?? v.message ?? 'invalid' };
  });
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(errorBody('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`, 'Check the path and method against the reference at /api/docs.'));
  });

  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof ApiError) return sendError(reply, err);
    if (hasZodFastifySchemaValidationErrors(err)) {
      const fields = fieldsOf(err as FastifyError & { validation?: ZodIssueLike[] });
      return reply.code(422).send(errorBody('validation_failed', `The request has ${fields.length === 1 ? 'a field' : 'fields'} of the wrong shape.`, 'Correct the fields listed in detail.fields and send the request again.', { fields }));
    }
    switch (err.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return reply.code(400).send(errorBody('bad_request', 'The body is not valid JSON.', 'Send a JSON object with Content-Type: application/json.'));
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.code(413).send(errorBody('payload_too_large', 'The request body is larger than this server accepts.', 'Send a smaller body; the limits are listed at GET /api/config.'));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send(errorBody('bad_request', `Content-Type ${String(request.headers['content-type'] ?? '(none)').slice(0, 80)} is not accepted here.`, 'Send JSON with Content-Type: application/json.'));
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return reply.code(400).send(errorBody('bad_request', 'Content-Length does not match the body.', 'Send the body with a correct Content-Length.'));
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.code(err.statusCode).send(errorBody('bad_request', 'The request cannot be handled as sent.', 'Check the request against the reference at /api/docs.'));
    }
    request.log.error({ err }, 'internal error');
    return reply.code(500).send(errorBody('internal_error', 'Something went wrong on our side.', 'Retry later; if it keeps happening, report the time of the request to the operator.'));
  });
}
