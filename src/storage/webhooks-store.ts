// An organization's webhook endpoints and their deliveries log (migrations/016_webhooks.sql),
// bound to the organization by its scope (organization-data.ts): every statement names the scope's
// organization, so an endpoint, a delivery or an event of another organization is never found.
// The sealed secrets are read only by `secrets` (what the test send and the deliverer sign with);
// listings never select them.

import type { Queryable } from './db.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { DELIVERY_ID_SQL, WEBHOOKS_CHANNEL, newEventId } from './webhook-outbox.ts';

export type EndpointStatus = 'enabled' | 'disabled';

export interface EndpointRow {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  status: EndpointStatus;
  disabled_reason: string | null;
  disabled_message: string | null;
  disabled_at: Date | null;
  secret_rotated_at: Date | null;
  previous_secret_expires_at: Date | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface AttemptRow {
  attempt: number;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
}

export interface DeliveryRow {
  id: string;
  seq: number;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  event_created_at: Date;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  next_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
  attempt_log: AttemptRow[];
}

const ENDPOINT = `id, url, description, events, status, disabled_reason, disabled_message, disabled_at, secret_rotated_at,
  CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_secret_expires_at, created_by, created_at, updated_at`;

export async function insertEndpoint(
  scope: OrganizationScope,
  e: { id: string; url: string; description: string | null; events: readonly string[]; secretSealed: string; by: string },
): Promise<EndpointRow> {
  const [row] = await scope.db.query<EndpointRow>(
    `INSERT INTO webhook_endpoints (id, organization_id, url, description, events, status, secret_sealed, created_by)
     VALUES ($1, $2, $3, $4, $5, 'enabled', $6, $7) RETURNING ${ENDPOINT}`,
    [e.id, scope.organizationId, e.url, e.description, e.events, e.secretSealed, e.by],
  );
  return row!;
}

export function listEndpoints(scope: OrganizationScope): Promise<EndpointRow[]> {
  return scope.db.query<EndpointRow>(`SELECT ${ENDPOINT} FROM webhook_endpoints WHERE organization_id = $1 ORDER BY created_at, id`, [scope.organizationId]);
}

export async function getEndpoint(scope: OrganizationScope, id: string): Promise<EndpointRow | undefined> {
  const [row] = await scope.db.query<EndpointRow>(`SELECT ${ENDPOINT} FROM webhook_endpoints WHERE organization_id = $1 AND id = $2`, [
    scope.organizationId,
    id,
  ]);
  return row;
}

export interface EndpointChange {
  url?: string | undefined;
  description?: string | null | undefined;
  events?: readonly string[] | undefined;
  /** Enabling clears the reason it was disabled; disabling by hand records `disabled_by_user`. */
  status?: EndpointStatus | undefined;
}

export async function changeEndpoint(scope: OrganizationScope, id: string, c: EndpointChange): Promise<EndpointRow | undefined> {
  const [row] = await scope.db.query<EndpointRow>(
    `UPDATE webhook_endpoints SET
       url = coalesce($3, url),
       description = CASE WHEN $4::boolean THEN $5 ELSE description END,
       events = coalesce($6, events),
       status = coalesce($7, status),
       disabled_reason = CASE $7 WHEN 'enabled' THEN NULL WHEN 'disabled' THEN CASE WHEN status = 'disabled' THEN disabled_reason ELSE 'disabled_by_user' END ELSE disabled_reason END,
       disabled_message = CASE $7 WHEN 'enabled' THEN NULL WHEN 'disabled' THEN CASE WHEN status = 'disabled' THEN disabled_message ELSE 'Disabled by a member of the organization.' END ELSE disabled_message END,
       disabled_at = CASE $7 WHEN 'enabled' THEN NULL WHEN 'disabled' THEN coalesce(disabled_at, now()) ELSE disabled_at END,
       updated_at = now()
     WHERE organization_id = $1 AND id = $2 RETURNING ${ENDPOINT}`,
    [scope.organizationId, id, c.url ?? null, c.description !== undefined, c.description ?? null, c.events ?? null, c.status ?? null],
  );
  if (row && c.status === 'enabled') await wake(scope.db);
  return row;
}

/** The new secret signs from now on; the one it replaces keeps signing until `overlapUntil`. */
export async function rotateEndpointSecret(scope: OrganizationScope, id: string, sealed: string, overlapSeconds: number): Promise<EndpointRow | undefined> {
  const [row] = await scope.db.query<EndpointRow>(
    `UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, previous_secret_expires_at = now() + make_interval(secs => $4),
       secret_sealed = $3, secret_rotated_at = now(), updated_at = now()
     WHERE organization_id = $1 AND id = $2 RETURNING ${ENDPOINT}`,
    [scope.organizationId, id, sealed, overlapSeconds],
  );
  return row;
}

/** Deletes the endpoint and its deliveries log (its events stay: other endpoints may have them). */
export async function deleteEndpoint(scope: OrganizationScope, id: string): Promise<boolean> {
  const rows = await scope.db.query(`DELETE FROM webhook_endpoints WHERE organization_id = $1 AND id = $2 RETURNING id`, [scope.organizationId, id]);
  return rows.length === 1;
}

/** The sealed secrets an endpoint signs with now (the previous one only within its overlap). */
export async function endpointSecrets(scope: OrganizationScope, id: string): Promise<{ current: string; previous: string | null } | undefined> {
  const [row] = await scope.db.query<{ current: string; previous: string | null }>(
    `SELECT secret_sealed AS current, CASE WHEN previous_secret_expires_at > now() THEN previous_secret_sealed END AS previous
     FROM webhook_endpoints WHERE organization_id = $1 AND id = $2`,
    [scope.organizationId, id],
  );
  return row;
}

const DELIVERY = `d.id, d.seq, d.endpoint_id, d.event_id, v.type AS event_type, v.created_at AS event_created_at, d.status, d.attempts,
  CASE WHEN d.status = 'pending' THEN d.next_attempt_at END AS next_attempt_at, d.last_status_code, d.last_error, d.delivered_at, d.created_at,
  coalesce((SELECT json_agg(json_build_object('attempt', a.attempt, 'started_at', a.started_at, 'duration_ms', a.duration_ms, 'status_code', a.status_code,
                                              'error', a.error, 'response_excerpt', a.response_excerpt) ORDER BY a.attempt)
            FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]'::json) AS attempt_log`;

/** An endpoint's deliveries, newest first, `limit` of them before the delivery `before` (its seq). */
export async function listDeliveries(
  scope: OrganizationScope,
  endpointId: string,
  limit: number,
  beforeSeq: number | null,
  status: DeliveryRow['status'] | null,
): Promise<DeliveryRow[]> {
  const rows = await scope.db.query<DeliveryRow>(
    `SELECT ${DELIVERY} FROM webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id
     WHERE d.organization_id = $1 AND d.endpoint_id = $2 AND ($3::bigint IS NULL OR d.seq < $3) AND ($4::text IS NULL OR d.status = $4)
     ORDER BY d.seq DESC LIMIT $5`,
    [scope.organizationId, endpointId, beforeSeq, status, limit],
  );
  return rows.map(withDates);
}

export async function getDelivery(scope: OrganizationScope, endpointId: string, id: string): Promise<(DeliveryRow & { payload: unknown }) | undefined> {
  const [row] = await scope.db.query<DeliveryRow & { payload: unknown }>(
    `SELECT ${DELIVERY}, v.payload FROM webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id
     WHERE d.organization_id = $1 AND d.endpoint_id = $2 AND d.id = $3`,
    [scope.organizationId, endpointId, id],
  );
  return row && withDates(row);
}

/** The delivery's event queued again for its endpoint, as a new delivery at the end of its order. */
export async function redeliver(scope: OrganizationScope, endpointId: string, deliveryId: string): Promise<string | undefined> {
  const [row] = await scope.db.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, status)
     SELECT ${DELIVERY_ID_SQL}, d.organization_id, d.endpoint_id, d.event_id, 'pending' FROM webhook_deliveries d
     WHERE d.organization_id = $1 AND d.endpoint_id = $2 AND d.id = $3 RETURNING id`,
    [scope.organizationId, endpointId, deliveryId],
  );
  if (row) await wake(scope.db);
  return row?.id;
}

/** A `webhook.test` event queued for this endpoint alone (whatever it subscribes to). */
export async function queueTestEvent(
  scope: OrganizationScope,
  endpointId: string,
  payload: unknown,
): Promise<{ event_id: string; delivery_id: string } | undefined> {
  return scope.db.transaction(async (tx) => {
    const [found] = await tx.query(`SELECT id FROM webhook_endpoints WHERE organization_id = $1 AND id = $2 FOR KEY SHARE`, [scope.organizationId, endpointId]);
    if (!found) return undefined;
    const eventId = newEventId();
    await tx.query(`INSERT INTO webhook_events (id, organization_id, type, payload) VALUES ($1, $2, 'webhook.test', $3)`, [
      eventId,
      scope.organizationId,
      JSON.stringify(payload),
    ]);
    const [row] = await tx.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, status) VALUES (${DELIVERY_ID_SQL}, $1, $2, $3, 'pending') RETURNING id`,
      [scope.organizationId, endpointId, eventId],
    );
    await wake(tx);
    return { event_id: eventId, delivery_id: row!.id };
  });
}

async function wake(q: Queryable): Promise<void> {
  await q.query(`SELECT pg_notify('${WEBHOOKS_CHANNEL}', '')`);
}

function withDates<T extends DeliveryRow>(row: T): T {
  // json_agg gives the attempts' times as text.
  return { ...row, attempt_log: row.attempt_log.map((a) => ({ ...a, started_at: new Date(a.started_at) })) };
}
