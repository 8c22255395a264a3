// How the HTTP layer describes the application's records that more than one group of routes
// answers with: a job (scoring, history imports, backtests) and an uploaded dataset, each as its
// contract type (src/contract/), and the path parameter naming an organization. One definition
// here, so route files never import each other.

import { z } from 'zod';
import type { Dataset as DatasetRecord, Job as JobRecord } from '../app/app.ts';
import { describeValidation } from '../app/datasets/datasets.ts';
import type { Dataset } from '../contract/datasets.ts';
import type { Job } from '../contract/jobs.ts';

/** `/api/organizations/{id}/…` */
export const OrgParams = z.object({ id: z.string().min(1).max(100) });

export function describeJob(j: JobRecord, now = Date.now()): Job {
  const start = j.started_at?.getTime();
  const end = j.finished_at?.getTime() ?? now;
  const source = j.kind === 'history_import' ? (j.params as { source?: 'dataset' | 'example' } | null)?.source : undefined;
  return {
    id: j.id,
    kind: j.kind,
    status: j.status,
    stage: j.stage,
    progress: j.progress,
    elapsed_seconds: start === undefined ? 0 : Math.round((end - start) / 100) / 10,
    ...(j.error ? { error: j.error } : {}),
    dataset_id: j.dataset_id,
    ...(source ? { source } : {}),
    organization_id: j.organization_id,
    mode: j.mode,
    created_at: j.created_at.toISOString(),
    started_at: j.started_at?.toISOString() ?? null,
    finished_at: j.finished_at?.toISOString() ?? null,
    summary: (j.result as Record<string, unknown> | null) ?? null,
  };
}

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
