// What more than one route's request shares beyond the contract (src/contract/, which defines the
// requests and answers themselves): a model id in the path, and the score routes' body limit.

import { z } from 'zod';

/** How large a score request's body may be. Far above any valid request (a few hundred bytes), so
 *  that a field too long is read and named by its own rule (422, with its length) instead of the
 *  whole body being refused by size; past it, the 413 lists every field's length. */
export const scoreBodyLimit = (maxJsonBodyBytes: number) => Math.max(maxJsonBodyBytes, 1 << 20);

export const ModelIdParams = z.object({ id: z.string().min(1).max(200) });
