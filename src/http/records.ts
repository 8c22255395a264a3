// How the HTTP layer describes the application's records that more than one group of routes
// answers with: a job (scoring, history imports, backtests) and an uploaded dataset, each as its
// contract type (src/contract/), and the path parameter naming an organization. One definition
// here, so route files never import each other.

import { z } from 'zod';
import type { Dataset as DatasetRecord } from '../app/app.ts';
import { describeValidation } from '../app/datasets/datasets.ts';
import type { Dataset } from '../contract/datasets.ts';

/** `/api/organizations/{id}/…` */
export const OrgParams = z.object({ id: z.string().min(1).max(100) });

/** A job as every route answers it (app/datasets/job-view.ts: webhooks send the same). */
export { jobView as describeJob } from '../app/datasets/job-view.ts';

export function describeDataset(d: DatasetRecord): Dataset {
  return {
    id: d.id,
    original_name: d.original_name,
    size_bytes: d.size_bytes,
    rows: d.rows,
    has_labels: d.has_labels,
    organization_id: d.organization_id,
    mapping: d.mapping,
    valid: d.validation.valid,
    validation: describeValidation(d.validation),
    created_at: d.created_at.toISOString(),
    expires_at: d.expires_at.toISOString(),
  };
}
