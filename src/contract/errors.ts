// The error body every route answers a failure with (http/errors.ts makes it from an AppError, a
// validation failure or the framework's own errors). One schema, so every status the reference
// lists documents the same body.

import { z } from 'zod';

export const ErrorResponse = z.object({
  detail: z
    .object({
      message: z.string(),
      reason: z.string(),
      fix: z.string(),
      fields: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      retry_after_seconds: z.number().optional(),
      request_id: z.string().optional().describe('The request id, as in the Request-Id header: the caller\'s X-Request-Id when it is 1–128 visible ASCII characters, otherwise generated; quote it when reporting a problem'),
    })
    .passthrough(),
});
export type ErrorResponse = z.infer<typeof ErrorResponse>;
