// The error body every route answers a failure with (http/errors.ts makes it from an AppError, a
// validation failure or the framework's own errors), and the catalogue of its reason codes: each
// reason has one HTTP status everywhere, a default message and a default fix, defined here once.
// A refusal names its reason and says what is particular to it (app/errors.ts AppError, http's
// ApiError); the status always comes from here. test/http/error-catalogue.test.ts holds the
// catalogue, the reference at /api/docs, docs/integrating.md's table and the answers to each other.

import { z } from 'zod';

/** One reason code: the status it is always answered with, and what it says when the refusal adds
 *  nothing of its own. */
export interface ErrorDefinition {
  status: number;
  message: string;
  fix: string;
}

export const ERRORS = {
  validation_failed: {
    status: 422,
    message: 'The request has fields of the wrong shape.',
    fix: 'Correct the fields listed in detail.fields and send the request again.',
  },
  card_number_refused: {
    status: 422,
    message: 'A field holds a card number, which this service never accepts: nothing was scored or stored.',
    fix: "Send a token from your payment provider, the card's BIN or its last four digits instead.",
  },
  ip_address_refused: {
    status: 422,
    message: 'A field holds an IP address, which this service never accepts: nothing was scored or stored.',
    fix: 'Send a keyed hash of the address (an HMAC with a secret of yours), or what you derive from it (a country), instead.',
  },
  not_a_member: {
    status: 422,
    message: 'A user named is not a member of the organization (or of the inbox).',
    fix: "Name a member (GET the organization's members), or invite the user first.",
  },
  no_escalation_inbox: {
    status: 422,
    message: "The case's inbox has no escalation inbox.",
    fix: 'Ask an owner to set one (PATCH …/inboxes/{inbox_id} with escalation_inbox_id), or assign the case to someone instead.',
  },
  case_closed: {
    status: 409,
    message: 'The case is closed: only reopening it changes it.',
    fix: 'Reopen the case (POST …/cases/{case_id}/status with {"status": "open"}) first.',
  },
  no_inbox: {
    status: 409,
    message: 'The organization has no inbox, so a case has nowhere to open.',
    fix: 'Ask an owner to make an inbox: POST /api/organizations/{id}/inboxes (e.g. {"name": "Everything"}, a default inbox).',
  },
  bad_request: { status: 400, message: 'The request cannot be handled as sent.', fix: 'Check the request against the reference at /api/docs.' },
  not_signed_in: { status: 401, message: 'You are not signed in, or your session has ended.', fix: 'Sign in again.' },
  invalid_api_key: {
    status: 401,
    message: 'The API key is not valid: unknown, rotated out or revoked.',
    fix: 'Use a current key of your organization, or ask an owner to create one.',
  },
  csrf_failed: {
    status: 403,
    message: 'This request uses your session but does not carry its CSRF token.',
    fix: 'Send the header X-CSRF-Token with the value of the CSRF cookie.',
  },
  forbidden: { status: 403, message: 'You may not do this.', fix: 'Ask an owner of the organization.' },
  not_found: { status: 404, message: 'Not found.', fix: 'Check the id, and that it belongs to your organization.' },
  method_not_allowed: { status: 405, message: 'This path does not answer this method.', fix: 'Use one of the methods in the Allow header.' },
  request_timeout: {
    status: 408,
    message: 'The request did not arrive in time (REQUEST_TIMEOUT_SECONDS).',
    fix: 'Send it again over a faster link, or split a large upload into smaller files.',
  },
  duplicate_transaction: {
    status: 409,
    message: 'The organization already has a transaction with this id, with another amount, customer or merchant.',
    fix: 'Send a new transaction_id for a new transaction, or the same fields to read the recorded answer again.',
  },
  conflict: { status: 409, message: 'This conflicts with what is stored.', fix: 'Read the current state and send the request again.' },
  list_in_use: {
    status: 409,
    message: "An active or shadow rule, or an inbox's route, names this list.",
    fix: 'Change or delete the rules and routes that name it first.',
  },
  job_not_finished: { status: 409, message: 'The job has not finished.', fix: 'Poll the job until its status is succeeded, then ask again.' },
  upload_expired: { status: 410, message: 'The upload is past its retention and was deleted.', fix: 'Upload the file again.' },
  payload_too_large: {
    status: 413,
    message: 'The request body is larger than this server accepts.',
    fix: 'Send a smaller body; the limits are listed at GET /api/config.',
  },
  uri_too_long: {
    status: 414,
    message: 'A part of the path is longer than this server reads.',
    fix: 'Send the identifier as issued: ids are at most 200 characters.',
  },
  unsupported_media_type: { status: 415, message: 'This Content-Type is not accepted here.', fix: 'Send the body with Content-Type: application/json.' },
  rate_limited: { status: 429, message: 'Too many requests.', fix: 'Wait as long as Retry-After says before sending more.' },
  job_quota_exceeded: {
    status: 429,
    message: "The organization has queued today's jobs.",
    fix: 'Wait until 00:00 UTC (Retry-After), or ask the operator to raise the quota.',
  },
  headers_too_large: {
    status: 431,
    message: 'The request headers are larger than the server accepts (16 KB).',
    fix: 'Send fewer or smaller headers (cookies included).',
  },
  too_many_rows: { status: 400, message: 'The file has more rows than allowed.', fix: 'Split the file, or ask the operator to raise the limit.' },
  limit_reached: {
    status: 400,
    message: 'The organization has the most of these it may have.',
    fix: 'Delete some it no longer needs, or ask the operator to raise the limit.',
  },
  internal_error: {
    status: 500,
    message: 'Something went wrong on our side.',
    fix: 'Retry later; if it keeps happening, report the time of the request to the operator.',
  },
  not_implemented: { status: 501, message: 'This is not built yet.', fix: 'Use the command line instead.' },
  auth_not_configured: {
    status: 503,
    message: 'Sign-in is not configured on this server.',
    fix: 'Ask the operator to configure an identity provider, or use an API key.',
  },
  model_unavailable: { status: 503, message: 'No model is loaded.', fix: 'Restart the server with a complete model folder.' },
  evaluation_unavailable: { status: 503, message: "The model's evaluation is not available.", fix: 'Restart the server with a complete model folder.' },
  database_unavailable: {
    status: 503,
    message: 'The database cannot be reached right now, so this request could not be completed.',
    fix: 'Send the same request again after Retry-After.',
  },
  database_timeout: {
    status: 503,
    message: 'The database did not finish this request within its statement time limit.',
    fix: 'Send the same request again after Retry-After.',
  },
  history_loading: {
    status: 503,
    message: "This organization's history is being loaded into this server process.",
    fix: 'Send the same request again after Retry-After.',
  },
  shutting_down: {
    status: 503,
    message: 'This server is shutting down.',
    fix: 'Send the request again: another server, or this one once restarted, will answer it.',
  },
  not_enough_data: {
    status: 422,
    message: "The organization's transactions and outcomes are not enough to train from yet.",
    fix: 'Import labelled history, report more outcomes, or wait for more traffic.',
  },
  invalid_rule: { status: 422, message: 'The rule expression cannot be saved.', fix: 'Correct the errors listed in detail.errors.' },
  invalid_webhook_url: { status: 422, message: 'The webhook URL cannot be used.', fix: 'Send an https URL of a public host.' },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorReason = keyof typeof ERRORS;
export const ERROR_REASONS = Object.keys(ERRORS) as ErrorReason[];

/** The status a reason is always answered with. */
export const statusOf = (reason: ErrorReason): number => ERRORS[reason].status;

export const ErrorResponse = z.object({
  detail: z
    .object({
      message: z.string(),
      reason: z
        .enum(ERROR_REASONS as [ErrorReason, ...ErrorReason[]])
        .describe('What went wrong, as a stable code to branch on; each code is always answered with the same status'),
      fix: z.string(),
      fields: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      retry_after_seconds: z.number().optional(),
      request_id: z
        .string()
        .optional()
        .describe(
          "The request id, as in the Request-Id header: the caller's X-Request-Id when it is 1–128 visible ASCII characters, otherwise generated; quote it when reporting a problem",
        ),
    })
    .passthrough(),
});
export type ErrorResponse = z.infer<typeof ErrorResponse>;
