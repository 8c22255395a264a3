// The zod schemas of the requests that more than one route reads: each validates a request and
// documents it in the OpenAPI reference (/api/docs). What the routes answer is src/contract/'s.
// Field rules are the ones docs/integrating.md records.

import { z } from 'zod';

/** The error body (contract/errors.ts), for the HTTP files that take it from here. */
export { ErrorResponse } from '../contract/errors.ts';

/** How large a score request's body may be. Far above any valid request (a few hundred bytes), so
 *  that a field too long is read and named by its own rule (422, with its length) instead of the
 *  whole body being refused by size; past it, the 413 lists every field's length. */
export const scoreBodyLimit = (maxJsonBodyBytes: number) => Math.max(maxJsonBodyBytes, 1 << 20);

export const ModelIdParams = z.object({ id: z.string().min(1).max(200) });
