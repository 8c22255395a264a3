// The durable job queue (migrations/003_jobs.sql): jobs are rows; a process claims the oldest
// queued one with `FOR UPDATE SKIP LOCKED` inside a transaction, only while fewer than
// `maxRunning` jobs run in total, so two processes on one PostgreSQL never run the same job and
// never exceed the limit together (the count and the claim happen under one advisory lock). A
// running job's process writes a heartbeat with its progress; one whose heartbeat is older than the
// stale limit (its process died) is queued again, or failed with the reason after max_attempts.
// Jobs are of two kinds (migration 007): `score` (a dataset scored into a result file) and
// `history_import` (rows stored into an organization's history; `params` names the source, and a
// dataset import also fills dataset_id). Both share the queue, the running limit and the quota.

import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from './db.ts';
import { writeOutbox, type OutboxEvent } from './webhook-outbox.ts';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';
export type JobKind = 'score' | 'history_import' | 'rings' | 'backtest';
export type ScoreMode = 'balanced' | 'high_precision' | 'high_recall';

export interface JobRecord {
  id: string;
  kind: JobKind;
  /** What the kind needs beyond the columns (a history import's source); null for scoring. */
  params: unknown;
  /** Always set for scoring; for an import, the dataset imported (null for the example). */
  dataset_id: string | null;
  /** Scoring only. */
  mode: ScoreMode | null;
  status: JobStatus;
  stage: string;
  progress: number;
  error: string | null;
  attempts: number;
  max_attempts: number;
  claimed_by: string | null;
  heartbeat_at: Date | null;
  owner_user_id: string | null;
  organization_id: string | null;
  result: unknown;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

const COLUMNS =
  'id, kind, params, dataset_id, mode, status, stage, progress, error, attempts, max_attempts, claimed_by, heartbeat_at, owner_user_id, organization_id, result, created_at, started_at, finished_at';
/** One advisory lock key for "count running jobs, then claim": serialises claims across processes. */
const CLAIM_LOCK = 7_301_991;
/** First half of the two-key advisory lock taken per organization while checking its job quota. */
const QUOTA_LOCK = 7_301_992;

export function newJobId(): string {
  return `job_${randomBytes(16).toString('base64url')}`;
}

/** A job to queue: a scoring job names its dataset and mode; another kind its params. */
export type NewJob = {
  id?: string;
  kind?: JobKind;
  params?: unknown;
  dataset_id: string | null;
  mode: ScoreMode | null;
  owner_user_id?: string | null;
  organization_id?: string | null;
};

export async function createJob(db: Queryable, j: NewJob): Promise<JobRecord> {
  const [row] = await db.query<JobRecord>(
    `INSERT INTO jobs (id, kind, params, dataset_id, mode, status, stage, owner_user_id, organization_id) VALUES ($1, $2, $3, $4, $5, 'queued', 'queued', $6, $7) RETURNING ${COLUMNS}`,
    [j.id ?? newJobId(), j.kind ?? 'score', j.params ?? null, j.dataset_id, j.mode, j.owner_user_id ?? null, j.organization_id ?? null],
  );
  return row!;
}

/** Jobs of an organization, or a user's own jobs outside any organization, newest first. */
export async function listJobs(db: Queryable, owner: { organizationId: string } | { userId: string }, limit = 500): Promise<JobRecord[]> {
  return 'organizationId' in owner
    ? db.query<JobRecord>(`SELECT ${COLUMNS} FROM jobs WHERE organization_id = $1 ORDER BY created_at DESC, id LIMIT $2`, [owner.organizationId, limit])
    : db.query<JobRecord>(`SELECT ${COLUMNS} FROM jobs WHERE owner_user_id = $1 AND organization_id IS NULL ORDER BY created_at DESC, id LIMIT $2`, [
        owner.userId,
        limit,
      ]);
}

/** Jobs an organization queued since `since` (what its daily quota counts). */
export async function countOrganizationJobsSince(db: Queryable, organizationId: string, since: Date): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs WHERE organization_id = $1 AND created_at >= $2', [organizationId, since]);
  return row!.n;
}

/**
 * Queues a job for an organization unless it already queued `quota` since `since` (its daily
 * quota); undefined when over. Count and insert run under a per-organization advisory lock, so two
 * requests (or two processes) at once cannot both take the last slot.
 */
export async function createOrganizationJob(
  db: Db,
  j: NewJob & { owner_user_id: string; organization_id: string },
  quota: number,
  since: Date,
): Promise<JobRecord | undefined> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [QUOTA_LOCK, j.organization_id]);
    if ((await countOrganizationJobsSince(tx, j.organization_id, since)) >= quota) return undefined;
    return createJob(tx, j);
  });
}

export async function getJob(db: Queryable, id: string): Promise<JobRecord | undefined> {
  const [row] = await db.query<JobRecord>(`SELECT ${COLUMNS} FROM jobs WHERE id = $1`, [id]);
  return row;
}

/** Claims the oldest queued job for `worker` if fewer than `maxRunning` run; undefined otherwise. */
export async function claimNext(db: Db, worker: string, maxRunning: number): Promise<JobRecord | undefined> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [CLAIM_LOCK]);
    const [running] = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE status = 'running'`);
    if (running!.n >= maxRunning) return undefined;
    const [job] = await tx.query<{ id: string }>(`SELECT id FROM jobs WHERE status = 'queued' ORDER BY queued_order LIMIT 1 FOR UPDATE SKIP LOCKED`);
    if (!job) return undefined;
    const [claimed] = await tx.query<JobRecord>(
      `UPDATE jobs SET status = 'running', stage = 'starting', claimed_by = $2, heartbeat_at = now(), started_at = coalesce(started_at, now()), attempts = attempts + 1
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [job.id, worker],
    );
    return claimed;
  });
}

/** Progress from the work itself; false when the job is no longer this worker's (taken over). */
export async function reportProgress(db: Queryable, id: string, worker: string, stage: string, progress: number): Promise<boolean> {
  const rows = await db.query(
    `UPDATE jobs SET stage = $3, progress = $4, heartbeat_at = now() WHERE id = $1 AND claimed_by = $2 AND status = 'running' RETURNING id`,
    [id, worker, stage, progress],
  );
  return rows.length === 1;
}

/** The webhook events a finished job is (job.succeeded, job.failed), written with its new state. */
export type JobAnnouncer = (job: JobRecord) => OutboxEvent[];

/** Runs a job's final UPDATE and writes the events `announce` makes of the row it left, in one
 *  transaction (the outbox): true when the job was this worker's. */
async function settle(db: Db, sql: string, params: unknown[], announce: JobAnnouncer | undefined): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<JobRecord>(`${sql} RETURNING ${COLUMNS}`, params);
    if (!row) return false;
    if (announce) await writeOutbox(tx, announce(row));
    return true;
  });
}

export async function finishJob(db: Db, id: string, worker: string, result: unknown, announce?: JobAnnouncer): Promise<boolean> {
  return settle(
    db,
    `UPDATE jobs SET status = 'succeeded', stage = 'done', progress = 1, result = $3, finished_at = now(), heartbeat_at = now() WHERE id = $1 AND claimed_by = $2 AND status = 'running'`,
    [id, worker, result],
    announce,
  );
}

export async function failJob(db: Db, id: string, worker: string, error: string, announce?: JobAnnouncer): Promise<boolean> {
  return settle(
    db,
    `UPDATE jobs SET status = 'failed', error = $3, finished_at = now() WHERE id = $1 AND claimed_by = $2 AND status = 'running'`,
    [id, worker, error],
    announce,
  );
}

/** Jobs whose process stopped beating for `staleMs`: queued again, or failed after max_attempts.
 *  Never `self`'s (the asking process's own): it is alive, so its jobs are running, however late
 *  their heartbeat (an event loop held for longer than the stale limit must not run a job twice). */
export async function recoverStale(db: Db, staleMs: number, self: string, announce?: JobAnnouncer): Promise<{ requeued: string[]; failed: string[] }> {
  const failed = await db.transaction(async (tx) => {
    const rows = await tx.query<JobRecord>(
      `UPDATE jobs SET status = 'failed', error = 'the server processing this job stopped ' || attempts || ' times; giving up', finished_at = now()
       WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => $1) AND claimed_by IS DISTINCT FROM $2 AND attempts >= max_attempts
       RETURNING ${COLUMNS}`,
      [staleMs / 1000, self],
    );
    if (announce && rows.length > 0) await writeOutbox(tx, rows.flatMap(announce));
    return rows;
  });
  const requeued = await db.query<{ id: string }>(
    `UPDATE jobs SET status = 'queued', stage = 'queued again after its server stopped', progress = 0, claimed_by = NULL
     WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => $1) AND claimed_by IS DISTINCT FROM $2 RETURNING id`,
    [staleMs / 1000, self],
  );
  return { requeued: requeued.map((r) => r.id), failed: failed.map((r) => r.id) };
}

/** Puts `worker`'s running jobs (or the one of them with `id`) back in the queue with `stage`;
 *  `attemptCounted: false` takes their claim back off their attempts. The ids handed back. */
async function handBack(db: Queryable, worker: string, stage: string, o: { id?: string; attemptCounted: boolean }): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `UPDATE jobs SET status = 'queued', stage = $2, progress = 0, claimed_by = NULL${o.attemptCounted ? '' : ', attempts = greatest(attempts - 1, 0)'}
     WHERE status = 'running' AND claimed_by = $1 ${o.id === undefined ? '' : 'AND id = $3'} RETURNING id`,
    o.id === undefined ? [worker, stage] : [worker, stage, o.id],
  );
  return rows.map((r) => r.id);
}

/** Hands one running job of `worker`'s back to the queue, its claim not counted as an attempt (the
 *  work met an outage of the database, no fault of the job's); false when it was not `worker`'s. */
export async function requeueJob(db: Queryable, id: string, worker: string, stage: string): Promise<boolean> {
  return (await handBack(db, worker, stage, { id, attemptCounted: false })).length === 1;
}

/** A stopping process hands its running jobs back to the queue at once (no wait for staleness). */
export function releaseWorker(db: Queryable, worker: string): Promise<string[]> {
  return handBack(db, worker, 'queued again after its server stopped', { attemptCounted: true });
}
