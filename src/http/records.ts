// How the HTTP layer describes the application's records that more than one group of routes
// answers with: a job (scoring, history imports, backtests), an uploaded dataset, and the path
// parameter naming an organization. One definition here, so route files never import each other.

import { z } from 'zod';
import { MODE_NAMES } from '../model/bundle-types.ts';
import type { Dataset as DatasetRecord, Job as JobRecord } from '../app/app.ts';
import { describeValidation } from '../app/datasets/datasets.ts';

/** `/api/organizations/{id}/…` */
export const OrgParams = z.object({ id: z.string().min(1).max(100) });

export const Job = z.object({
  id: z.string(),
  kind: z.enum(['score', 'history_import', 'rings', 'backtest']).describe('`score`: a dataset scored (POST /api/datasets/score); `history_import`: rows stored into an organization\'s history; `rings`: the service\'s own analysis of a weekly window, which belongs to no user and is never listed; `backtest`: a rule evaluated on the organization\'s logged decisions (its report is the `summary`)'),
  status: z.enum(['queued', 'running', 'succeeded', 'failed']),
  stage: z.string(),
  progress: z.number(),
  elapsed_seconds: z.number(),
  error: z.string().optional(),
  dataset_id: z.string().nullable().describe('The dataset scored or imported; null for an import of the built-in example'),
  source: z.enum(['dataset', 'example']).optional().describe('What a history import stores'),
  organization_id: z.string().nullable(),
  mode: z.enum(MODE_NAMES).nullable().describe('Scoring jobs only'),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  summary: z.record(z.string(), z.unknown()).nullable(),
});
export type Job = z.infer<typeof Job>;
export function describeJob(j: JobRecord, now = Date.now()) {
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

export function describeDataset(d: DatasetRecord) {
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

/** An upload as the dataset routes answer it (`GET /api/datasets/{id}`, the upload's 201, `POST …/validate`; their
 *  schema says only "an object"): its validation is the stored one, as `describeValidation` shows it. */
export type Dataset = ReturnType<typeof describeDataset>;
/** What the check found (a dataset's `validation`, and `detail.validation` of a 422 `validation_failed` upload). */
export type DatasetValidation = Dataset['validation'];

