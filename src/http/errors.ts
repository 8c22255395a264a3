// Errors as the specification shapes them: `{"detail": {"message", "reason", "fix", ...}}` with a
// reason code of the catalogue (contract/errors.ts: its status; docs/integrating.md, Errors), on every error the
// service answers, including Fastify's own (malformed JSON, oversized body, unknown route, wrong
// content type) and zod's validation failures (422 with `detail.fields`). A 500 says nothing
// about what failed; the detail goes to the log. A known path asked with a method it does not
// have answers 405 with `Allow` (the methods it has), not 404: the route registry below learns
// every route's path and methods as they are added.
// Every route's documented responses gain the statuses the framework itself can answer for it
// (documentFrameworkStatuses), so the reference lists every status a client can meet.
// Every error body carries the request's id (`detail.request_id`, the `Request-Id` header:
// request-id.ts), the one its log line has.

import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError, databaseTimedOut, databaseUnavailable, type ErrorReason } from '../app/errors.ts';
import { ERRORS, statusOf } from '../contract/errors.ts';
import { newRequestId, REQUEST_ID_HEADER } from './request-id.ts';

/** What a request that needed the database answers while it cannot be reached (a restart, a
 *  failover, a network cut): how long a client waits before it tries again. The pool reconnects on
 *  the next query, so the first retry after the server is back succeeds. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/** A refusal of the HTTP layer's own (before or around a use case): a reason of the catalogue
 *  (contract/errors.ts, its status), what is particular to it, and headers to send with it. */
export class ApiError extends AppError {
  readonly headers: Record<string, string>;

  constructor(reason: ErrorReason, message?: string, fix?: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(reason, message, fix, extra);
    this.headers = headers;
  }
}

/** The body of an error: the catalogue's message and fix for `reason` unless given. */
export function errorBody(
  reason: ErrorReason,
  message: string = ERRORS[reason].message,
  fix: string = ERRORS[reason].fix,
  extra: Record<string, unknown> = {},
) {
  return { detail: { message, reason, fix, ...extra } };
}

/** A body schema's text fields with their longest lengths ("customer_id 200, …"), read once per
 *  schema from what the reference says of it: what an answer to a body too large names. */
const textLimitsOf = new WeakMap<object, string>();
function textLimits(schema: unknown): string {
  if (!(schema instanceof z.ZodType)) return '';
  let said = textLimitsOf.get(schema);
  if (said === undefined) {
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, { maxLength?: number }> };
    said = Object.entries(json.properties ?? {})
      .filter(([, p]) => p.maxLength !== undefined)
      .map(([name, p]) => `${name} ${p.maxLength}`)
      .join(', ');
    textLimitsOf.set(schema, said);
  }
  return said;
}

/** Sends an error body with its reason's status and the request's id, and keeps its reason for the
 *  request's log line. The id's header is set here too: Fastify's own errors before a route is
 *  found (frameworkError) are answered before the onRequest hook that sets it runs. */
function answer(reply: FastifyReply, body: ReturnType<typeof errorBody>): FastifyReply {
  reply.errorReason = body.detail.reason;
  const id = reply.request.id;
  return reply
    .code(statusOf(body.detail.reason))
    .header(REQUEST_ID_HEADER, id)
    .send({ detail: { ...body.detail, request_id: id } });
}

export function sendError(reply: FastifyReply, e: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
  return answer(reply, errorBody(e.reason, e.message, e.fix, e.extra));
}

/** What Node's HTTP parser refuses before any route sees the request (Fastify's
 *  `clientErrorHandler`): a request that did not arrive within REQUEST_TIMEOUT_SECONDS (408), headers
 *  over Node's limit (431), anything else the parser cannot read (400); in the service's shape, and
 *  the connection closed. A client that went away gets nothing. No request was read, so its id is a
 *  new one (a caller's X-Request-Id is not read from headers the parser refused), in no log line:
 *  it is there so that every answer has the same shape. */
export function clientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [reason, message, fix]: [ErrorReason, string?, string?] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? ['request_timeout']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? ['headers_too_large']
        : ['bad_request', 'The request is not valid HTTP.', 'Send a well-formed HTTP/1.1 request.'];
  const id = newRequestId();
  const body = JSON.stringify(errorBody(reason, message, fix, { request_id: id }));
  const status = statusOf(reason);
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy();
}

interface ZodIssueLike {
  /** The zod issue's code. */
  keyword?: string;
  instancePath?: string;
  message?: string;
  params?: { keys?: unknown; issue?: { path?: (string | number)[]; message?: string } };
}

/** The longest unknown field name a path repeats: the name is the caller's, not the schema's. */
const MAX_UNKNOWN_NAME = 200;

/** `detail.fields`: one `{ path, message }` per problem, `path` dotted from the part's root. An
 *  object with fields its (strict) schema does not have is one zod issue on the object listing
 *  them; here each unknown field is a problem of its own, named (`body.foo`), so a client sees
 *  which field to drop rather than `body`. */
function fieldsOf(err: FastifyError & { validation?: ZodIssueLike[]; validationContext?: string }): { path: string; message: string }[] {
  return ((err.validation ?? []) as unknown as ZodIssueLike[]).flatMap((v) => {
    const path = [err.validationContext ?? 'body', ...(v.params?.issue?.path ?? (v.instancePath ?? '').split('/').filter(Boolean))].join('.');
    const keys = v.keyword === 'unrecognized_keys' ? v.params?.keys : undefined;
    if (Array.isArray(keys) && keys.length > 0)
      return keys.map((k) => ({
        path: `${path}.${String(k).slice(0, MAX_UNKNOWN_NAME)}`,
        message: 'unknown field: the reference at /api/docs lists the fields this request takes',
      }));
    return [{ path, message: v.params?.issue?.message ?? v.message ?? 'invalid' }];
  });
}

/** Every route's path pattern and methods, learnt as routes are added (onRoute). */
export class RouteRegistry {
  private readonly routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();

  add(url: string, methods: string | string[]): void {
    let r = this.routes.get(url);
    if (!r) {
      const source = url
        .split('/')
        .map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      this.routes.set(url, (r = { pattern: new RegExp(`^${source}/?$`), methods: new Set() }));
    }
    for (const m of Array.isArray(methods) ? methods : [methods]) r.methods.add(m.toUpperCase());
  }

  /** The methods of the resource at `path`, sorted; empty when no route has the path. The most
   *  specific routes name the resource: `/api/datasets/example` is the example's route, not a
   *  dataset id, so the dataset's DELETE is not among its methods. */
  allowed(path: string): string[] {
    // A catch-all (CORS's preflight route, `*`) matches every path: it makes none of them known.
    const matches = [...this.routes].filter(([url, r]) => url !== '*' && url !== '/*' && r.pattern.test(path));
    const params = (url: string) => url.split('/').filter((p) => p.startsWith(':') || p === '*').length;
    const fewest = Math.min(...matches.map(([url]) => params(url)));
    const methods = new Set<string>();
    for (const [url, r] of matches) if (params(url) === fewest) for (const m of r.methods) methods.add(m);
    return [...methods].sort();
  }
}

function notFoundOrNotAllowed(routes: RouteRegistry, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0]!;
  const allowed = routes.allowed(path);
  if (allowed.length > 0 && !allowed.includes(request.method)) {
    reply.header('allow', allowed.join(', '));
    return answer(
      reply,
      errorBody(
        'method_not_allowed',
        `${path} does not answer ${request.method.slice(0, 16)}.`,
        `Use one of ${allowed.join(', ')} (the Allow header); the reference at /api/docs lists each.`,
      ),
    );
  }
  return answer(
    reply,
    errorBody('not_found', `No route ${request.method.slice(0, 16)} ${path.slice(0, 200)}.`, 'Check the path and method against the reference at /api/docs.'),
  );
}

/** Fastify's own errors before a route is found (`frameworkErrors`): a malformed URL, or a path
 *  parameter longer than the router takes. */
export function frameworkError(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return answer(
      reply,
      errorBody(
        'uri_too_long',
        `A part of the path is longer than the ${MAX_PATH_PARAMETER} characters this server reads.`,
        'Send the identifier as issued: ids are at most 200 characters.',
      ),
    );
  }
  return answer(
    reply,
    errorBody('bad_request', 'The URL is not valid: it has a malformed percent-encoding.', 'Percent-encode the path as RFC 3986 says (a literal % is %25).'),
  );
}

/** The longest path parameter the router reads; longer is 414. Above every declared `maxLength`,
 *  so an over-long id within it is answered by validation (422) with the field named. */
export const MAX_PATH_PARAMETER = 1000;

type RouteSchema = {
  body?: unknown;
  querystring?: unknown;
  params?: unknown;
  headers?: unknown;
  consumes?: string[];
  response?: Record<string | number, unknown>;
  hide?: boolean;
};

/** Adds to a route's documented responses what is answered outside its handler: 422 when anything
 *  is validated, 414 and 400 (malformed percent-encoding) when the path has parameters; for a route
 *  that may read a body 400 (malformed JSON), 413 (too large) and 415 (another content type);
 *  and everywhere 408 (`request_timeout`, a request that did not arrive within
 *  REQUEST_TIMEOUT_SECONDS: clientError), 500 (`internal_error`, a fault of the server's own,
 *  logged with the request id) and 503 (`shutting_down`, a request that arrives while the server
 *  drains: app.ts; `database_unavailable`, a request that needed the database while it could not be
 *  reached). */
export function documentFrameworkStatuses(route: { url: string; method: string | string[]; schema?: RouteSchema }, errorSchema: unknown): void {
  const schema = route.schema;
  if (!schema?.response || schema.hide) return;
  const add: number[] = [408, 500, 503];
  if (schema.body || schema.querystring || schema.params || schema.headers) add.push(422);
  // A path parameter: too long (414), or a malformed percent-encoding in it (400).
  if (route.url.includes(':')) add.push(414, 400);
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  // Fastify reads a body sent with DELETE too.
  if (methods.some((m) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(m))) add.push(400, 413, 415);
  for (const status of add) if (!(status in schema.response) && !(String(status) in schema.response)) schema.response[status] = errorSchema;
}

export function installErrorHandling(app: FastifyInstance, routes: RouteRegistry): void {
  app.setNotFoundHandler((request, reply) => notFoundOrNotAllowed(routes, request, reply));

  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof ApiError) return sendError(reply, err);
    if (err instanceof AppError) {
      // A refusal that says when to try again (a quota) says it in Retry-After too.
      if (typeof err.extra.retry_after_seconds === 'number') reply.header('retry-after', String(err.extra.retry_after_seconds));
      return answer(reply, errorBody(err.reason, err.message, err.fix, err.extra));
    }
    // The database out of reach, or a statement it cancelled at its time limit: the failure is the
    // database's, not the request's: 503 with when to try again, never a 500. The message names the
    // server (host, port, database) but never its URL or password.
    const database = databaseUnavailable(err)
      ? {
          reason: 'database_unavailable' as const,
          log: 'database unavailable',
          message: 'The database cannot be reached right now, so this request could not be completed.',
          more: ', whichever attempt stores it.',
        }
      : databaseTimedOut(err)
        ? {
            reason: 'database_timeout' as const,
            log: 'database statement timed out',
            message: 'The database did not finish this request within its statement time limit.',
            more: '. If it keeps happening, the operator should look for long-held locks or an overloaded database (DATABASE_STATEMENT_TIMEOUT_SECONDS sets the limit).',
          }
        : undefined;
    if (database) {
      request.log.warn({ err: err.message }, database.log);
      reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
      return answer(
        reply,
        errorBody(
          database.reason,
          database.message,
          `Send the same request again after ${DATABASE_RETRY_AFTER_SECONDS} s (Retry-After); a score sent again with the same transaction_id is recorded once${database.more}`,
          { retry_after_seconds: DATABASE_RETRY_AFTER_SECONDS },
        ),
      );
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      const fields = fieldsOf(err as FastifyError & { validation?: ZodIssueLike[] });
      return answer(
        reply,
        errorBody(
          'validation_failed',
          `The request has ${fields.length === 1 ? 'a field' : 'fields'} of the wrong shape.`,
          'Correct the fields listed in detail.fields and send the request again.',
          { fields },
        ),
      );
    }
    switch (err.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return answer(reply, errorBody('bad_request', 'The body is not valid JSON.', 'Send a JSON object with Content-Type: application/json.'));
      case 'FST_ERR_CTP_BODY_TOO_LARGE': {
        const size = Number(request.headers['content-length']);
        const limits = textLimits(request.routeOptions.schema?.body);
        return answer(
          reply,
          errorBody(
            'payload_too_large',
            `The request body${Number.isFinite(size) && size > 0 ? ` (${size} bytes)` : ''} is larger than this endpoint accepts (${request.routeOptions.bodyLimit} bytes).`,
            limits
              ? `Keep each text field within its length in characters (${limits}) and send it again; every limit is in the API reference (/api/docs).`
              : 'Send a smaller body; the limits are listed at GET /api/config.',
          ),
        );
      }
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return answer(
          reply,
          errorBody(
            'unsupported_media_type',
            `Content-Type ${String(request.headers['content-type'] ?? '(none)').slice(0, 80)} is not accepted here.`,
            `Send the body with Content-Type: ${acceptedTypes(request).join(' or ')}.`,
          ),
        );
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return answer(reply, errorBody('bad_request', 'Content-Length does not match the body.', 'Send the body with a correct Content-Length.'));
    }
    // A method the router does not know at all (QUERY, say) on a known path.
    if (!request.routeOptions.url && routes.allowed(request.url.split('?')[0]!).length > 0) return notFoundOrNotAllowed(routes, request, reply);
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return answer(reply, errorBody('bad_request'));
    request.log.error({ err }, 'internal error');
    return answer(
      reply,
      errorBody('internal_error', 'Something went wrong on our side.', 'Retry later; if it keeps happening, report the time of the request to the operator.'),
    );
  });
}

/** The content types a route's body may have, as its reference documents them (JSON unless it
 *  lists others: the upload takes text/csv or a multipart form). */
function acceptedTypes(request: FastifyRequest): string[] {
  const documented = (request.routeOptions.config as { documentedBody?: { content?: Record<string, unknown> } } | undefined)?.documentedBody;
  const listed = documented?.content ? Object.keys(documented.content) : [];
  return listed.length ? listed : ['application/json'];
}
