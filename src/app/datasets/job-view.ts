// A job (a dataset's scoring, a history import, a backtest) as the API shows it: one definition
// for every use case that answers a route with a job (queueing one, reading one, listing them) and
// for the `job.succeeded` and `job.failed` webhook events, which carry the job exactly as
// GET /api/jobs/{id} answers it.

import type { Job } from '../../contract/jobs.ts';
import type { JobRecord } from '../../storage/job-queue.ts';
import type { OutboxEvent } from '../../storage/webhook-outbox.ts';

export function jobView(j: JobRecord, now = Date.now()): Job {
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

/** The webhook event a finished job is: an organization's scoring, import or backtest (a ring
 *  analysis is the service's own work, and a guest's job has no organization to tell). */
export function announceJob(j: JobRecord): OutboxEvent[] {
  if (!j.organization_id || j.kind === 'rings' || (j.status !== 'succeeded' && j.status !== 'failed')) return [];
  return [{ organizationId: j.organization_id, type: `job.${j.status}`, payload: jobView(j) }];
}
