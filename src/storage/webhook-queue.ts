// The webhook deliveries queue, as the deliverers of every process share it (migrations/016): the
// durable queue's discipline (rows claimed with FOR UPDATE SKIP LOCKED, a lease that lapses when
// its process dies) applied per endpoint rather than per delivery, because an endpoint's deliveries
// go out in the order they were queued: one process at a time holds an endpoint's lease and sends
// its pending deliveries oldest first, and a delivery that failed holds back the later ones until
// it succeeds or the endpoint is given up on. Across organizations by nature (it serves every
// endpoint); it reads an event only to send it to the endpoint its organization registered.

import type { Db, Queryable } from './db.ts';

export interface LeasedEndpoint {
  id: string;
  organization_id: string;
}

export interface QueuedDelivery {
  id: string;
  seq: number;
  attempts: number;
  first_attempt_at: Date | null;
  /** Not before now: the head of the endpoint's order is waiting for its retry time. */
  due: boolean;
  event_id: string;
  type: string;
  organization_id: string;
  created_at: Date;
  payload: unknown;
  /** The endpoint as it is now (a URL changed or a secret rotated during a lease counts from the next batch). */
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
}

/**
 * Leases up to `limit` enabled endpoints whose oldest pending delivery is due and whose lease is
 * free or lapsed, to `worker` for `leaseMs`.
 */
export async function leaseEndpoints(db: Db, worker: string, leaseMs: number, limit: number): Promise<LeasedEndpoint[]> {
  return db.query<LeasedEndpoint>(
    `UPDATE webhook_endpoints e SET lease_owner = $1, lease_until = now() + make_interval(secs => $2)
     WHERE e.id IN (
       SELECT c.id FROM webhook_endpoints c
       WHERE c.status = 'enabled' AND (c.lease_until IS NULL OR c.lease_until < now())
         AND (SELECT d.next_attempt_at FROM webhook_deliveries d WHERE d.endpoint_id = c.id AND d.status = 'pending' ORDER BY d.seq LIMIT 1) <= now()
       ORDER BY c.id LIMIT $3 FOR UPDATE SKIP LOCKED)
     RETURNING e.id, e.organization_id`,
    [worker, leaseMs / 1000, limit],
  );
}

/** Keeps the lease; false when it is no longer this worker's (it lapsed and another took it) or
 *  the endpoint was disabled or deleted meanwhile. */
export async function renewLease(db: Queryable, endpointId: string, worker: string, leaseMs: number): Promise<boolean> {
  const rows = await db.query(
    `UPDATE webhook_endpoints SET lease_until = now() + make_interval(secs => $3) WHERE id = $1 AND lease_owner = $2 AND status = 'enabled' RETURNING id`,
    [endpointId, worker, leaseMs / 1000],
  );
  return rows.length === 1;
}

export async function releaseLease(db: Queryable, endpointId: string, worker: string): Promise<void> {
  await db.query(`UPDATE webhook_endpoints SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2`, [endpointId, worker]);
}

/** A stopping process lets go of every endpoint it holds, so another takes them up at once. */
export async function releaseWorkerLeases(db: Queryable, worker: string): Promise<void> {
  await db.query(`UPDATE webhook_endpoints SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1`, [worker]);
}

/** Disables an endpoint this worker holds, with the reason, and lets go of it. */
export async function disableLeased(db: Queryable, endpointId: string, worker: string, reason: string, message: string): Promise<void> {
  await db.query(
    `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $3, disabled_message = $4, disabled_at = now(), updated_at = now(), lease_owner = NULL, lease_until = NULL
     WHERE id = $1 AND lease_owner = $2`,
    [endpointId, worker, reason, message],
  );
}

/** The endpoint's oldest pending deliveries, in their order, with their events. */
export async function pendingDeliveries(db: Queryable, endpointId: string, limit: number): Promise<QueuedDelivery[]> {
  return db.query<QueuedDelivery>(
    `SELECT d.id, d.seq, d.attempts, d.first_attempt_at, d.next_attempt_at <= now() AS due,
            v.id AS event_id, v.type, v.organization_id, v.created_at, v.payload,
            e.url, e.secret_sealed, CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret_sealed END AS previous_secret_sealed
     FROM webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id JOIN webhook_endpoints e ON e.id = d.endpoint_id
     WHERE d.endpoint_id = $1 AND d.status = 'pending' ORDER BY d.seq LIMIT $2`,
    [endpointId, limit],
  );
}

export interface AttemptResult {
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  /** A reason code (`timeout`, `connection_failed`, `address_refused`, `redirect`, `http_status`, …); null on success. */
  error: string | null;
  responseExcerpt: string | null;
}

/** What becomes of the delivery after an attempt. */
export type AttemptOutcome = { kind: 'succeeded' } | { kind: 'retry'; afterSeconds: number } | { kind: 'gave_up'; endpointMessage: string };

/** One attempt of a delivery, with what becomes of the delivery. */
export interface RecordedAttempt {
  deliveryId: string;
  attempt: number;
  result: AttemptResult;
  outcome: AttemptOutcome;
}

/**
 * Records attempts of one endpoint's deliveries and their consequences in one transaction, while
 * `worker` still holds the endpoint: a success, or a retry time for the delivery; giving up fails
 * the delivery and disables the endpoint with the reason. False when the lease was lost (another
 * process owns the endpoint now and will send those deliveries again: at least once).
 */
export async function recordAttempts(db: Db, endpointId: string, worker: string, attempts: readonly RecordedAttempt[]): Promise<boolean> {
  if (attempts.length === 0) return true;
  const status = (a: RecordedAttempt) => (a.outcome.kind === 'succeeded' ? 'succeeded' : a.outcome.kind === 'gave_up' ? 'failed' : 'pending');
  const gaveUp = attempts.find((a) => a.outcome.kind === 'gave_up')?.outcome;
  // One statement (atomic without a transaction): every part runs only while the lease is held.
  const [row] = await db.query<{ held: number }>(
    `WITH held AS (SELECT id FROM webhook_endpoints WHERE id = $10 AND lease_owner = $11 FOR NO KEY UPDATE),
          a AS (SELECT a.* FROM held, unnest($1::text[], $2::int4[], $3::timestamptz[], $4::float8[], $5::int4[], $6::text[], $7::text[], $8::text[], $9::float8[])
                AS a(delivery_id, attempt, started_at, duration_ms, status_code, error, response_excerpt, status, after_seconds)),
          logged AS (INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, response_excerpt)
                     SELECT delivery_id, attempt, started_at, duration_ms, status_code, error, response_excerpt FROM a
                     ON CONFLICT (delivery_id, attempt) DO NOTHING),
          done AS (UPDATE webhook_deliveries d SET status = a.status, attempts = a.attempt, first_attempt_at = coalesce(d.first_attempt_at, a.started_at), last_attempt_at = a.started_at,
                     last_status_code = a.status_code, last_error = a.error, delivered_at = CASE WHEN a.status = 'succeeded' THEN now() END,
                     next_attempt_at = CASE WHEN a.status = 'pending' THEN now() + make_interval(secs => a.after_seconds) ELSE d.next_attempt_at END
                   FROM a WHERE d.id = a.delivery_id),
          disabled AS (UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'delivery_failing', disabled_message = $12, disabled_at = now(), updated_at = now(),
                         lease_owner = NULL, lease_until = NULL
                       WHERE id IN (SELECT id FROM held) AND $12::text IS NOT NULL)
     SELECT count(*)::int AS held FROM held`,
    [
      attempts.map((a) => a.deliveryId),
      attempts.map((a) => a.attempt),
      attempts.map((a) => a.result.startedAt.toISOString()),
      attempts.map((a) => a.result.durationMs),
      attempts.map((a) => a.result.statusCode),
      attempts.map((a) => a.result.error),
      attempts.map((a) => a.result.responseExcerpt),
      attempts.map(status),
      attempts.map((a) => (a.outcome.kind === 'retry' ? a.outcome.afterSeconds : 0)),
      endpointId,
      worker,
      gaveUp?.kind === 'gave_up' ? gaveUp.endpointMessage : null,
    ],
  );
  return row!.held === 1;
}
