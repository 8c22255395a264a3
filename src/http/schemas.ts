// The zod schemas of the requests that more than one route reads: each validates a request and
// documents it in the OpenAPI reference (/api/docs). What the routes answer is src/contract/'s.
// Field rules are the ones docs/integrating.md records.

import { z } from 'zod';

/** The error body (contract/errors.ts), for the HTTP files that take it from here. */
export { ErrorResponse } from '../contract/errors.ts';

export const ModelIdParams = z.object({ id: z.string().min(1).max(200) });
