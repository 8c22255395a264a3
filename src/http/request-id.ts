// Request ids: one id per request, the Fastify request id, sent back in the `Request-Id` header of
// every response, in every error body (`detail.request_id`, errors.ts) and in the request's log
// lines (`request_id` in access-log.ts's, `reqId` in Fastify's), so an id a caller quotes finds the
// request in the log. A caller's own `X-Request-Id` is used when it is 1–128 visible ASCII
// characters (0x21–0x7E: a trace id of the caller's, say); anything else (longer, spaces, control
// characters, several headers, which Node joins with ", ") is replaced by a generated one, so a
// header can neither forge a log line nor grow one without bound. This runs on every request,
// scoring included: one regular-expression test, and a new string only when one is generated.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The response header that carries the id (lower case, as Node stores it). */
export const REQUEST_ID_HEADER = 'request-id';

/** What a caller's `X-Request-Id` must be to be used as it is. */
const CALLERS_ID = /^[\x21-\x7e]{1,128}$/;

/** A new id: `req_` and a random UUID (like the scorer's generated `tx_` transaction ids). */
export function newRequestId(): string {
  return `req_${randomUUID()}`;
}

/** Fastify's `genReqId`: the caller's `X-Request-Id` when well formed, otherwise a new id. */
export function requestIdOf(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && CALLERS_ID.test(sent) ? sent : newRequestId();
}
