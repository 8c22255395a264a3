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
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
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
     RETURNING e.id, e.organization_id, e.url, e.secret_sealed,
       CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret_sealed END AS previous_secret_sealed`,
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
            v.id AS event_id, v.type, v.organization_id, v.created_at, v.payload
     FROM webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id
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

/**
 * Records one attempt and its consequence in one transaction, while `worker` still holds the
 * endpoint: a success or a retry time for the delivery; giving up fails the delivery and disables
 * the endpoint with the reason. False when the lease was lost (another process owns the endpoint
 * now and will send the delivery again: at least once).
 */
export async function recordAttempt(db: Db, d: { id: string; endpointId: string; attempt: number }, worker: string, r: AttemptResult, outcome: AttemptOutcome): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [held] = await tx.query(`SELECT id FROM webhook_endpoints WHERE id = $1 AND lease_owner = $2 FOR NO KEY UPDATE`, [d.endpointId, worker]);
    if (!held) return false;
    await tx.query(
      `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, response_excerpt) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (delivery_id, attempt) DO NOTHING`,
      [d.id, d.attempt, r.startedAt, r.durationMs, r.statusCode, r.error, r.responseExcerpt],
    );
    const status = outcome.kind === 'succeeded' ? 'succeeded' : outcome.kind === 'gave_up' ? 'failed' : 'pending';
    await tx.query(
      `UPDATE webhook_deliveries SET status = $2, attempts = $3, first_attempt_at = coalesce(first_attempt_at, $4), last_attempt_at = $4,
         last_status_code = $5, last_error = $6, delivered_at = CASE WHEN $2 = 'succeeded' THEN now() END,
         next_attempt_at = CASE WHEN $2 = 'pending' THEN now() + make_interval(secs => $7) ELSE next_attempt_at END
       WHERE id = $1`,
      [d.id, status, d.attempt, r.startedAt, r.statusCode, r.error, outcome.kind === 'retry' ? outcome.afterSeconds : 0],
    );
    if (outcome.kind === 'gave_up')
      await tx.query(
        `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'delivery_failing', disabled_message = $2, disabled_at = now(), updated_at = now(),
           lease_owner = NULL, lease_until = NULL WHERE id = $1`,
        [d.endpointId, outcome.endpointMessage],
      );
    return true;
  });
}
