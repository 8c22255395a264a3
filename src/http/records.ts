// How the HTTP layer describes the application's records that more than one group of routes
// answers with: a job (scoring, history imports, backtests) as its contract type (src/contract/),
// and the path parameter naming an organization. One definition here, so route files never import
// each other.

import { z } from 'zod';

/** `/api/organizations/{id}/…` */
export const OrgParams = z.object({ id: z.string().min(1).max(100) });

/** A job as every route answers it (app/datasets/job-view.ts: webhooks send the same). */
export { jobView as describeJob } from '../app/datasets/job-view.ts';
