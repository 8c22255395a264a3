// The webhooks outbox (migrations/016_webhooks.sql): an event is written inside the database
// transaction of the change that causes it, with one delivery for each enabled endpoint of its
// organization subscribed to its type at that moment. Rolled back with the change, it was never
// sent; committed, it is in the queue the deliverers read (webhook-queue.ts), and the NOTIFY queued
// here wakes them when the transaction commits. No endpoint subscribed: nothing is written.

import { randomBytes } from 'node:crypto';
import type { Queryable } from './db.ts';

/** The channel a committed event wakes the deliverers on (its payload means nothing). */
export const WEBHOOKS_CHANNEL = 'webhooks';
/** The channel a committed change to an endpoint's status or events is announced on, by a trigger
 *  (migrations/018_webhook_endpoint_changes.sql); the payload is the organization's id. */
export const ENDPOINTS_CHANNEL = 'webhook_endpoints';

/** The events the decision log's group commit writes (`decision.review`, `decision.block`, and the
 *  `case.*` events a decision's case makes) that each organization's enabled endpoints subscribe
 *  to: every organization's, or one's. Endpoint settings only (no event, no payload): what the
 *  decision log needs to know whether a flagged payment, or a case it opens, is an event at all. */
export async function decisionSubscriptions(db: Queryable, organizationId?: string): Promise<Map<string, Set<string>>> {
  const rows = await db.query<{ organization_id: string; types: string[] }>(
    `SELECT e.organization_id, array_agg(DISTINCT t) AS types
     FROM webhook_endpoints e, unnest(e.events) t
     WHERE e.status = 'enabled' AND (t LIKE 'decision.%' OR t LIKE 'case.%') ${organizationId === undefined ? '' : 'AND e.organization_id = $1'}
     GROUP BY e.organization_id`,
    organizationId === undefined ? [] : [organizationId],
  );
  return new Map(rows.map((r) => [r.organization_id, new Set(r.types)]));
}

/** An event as its cause writes it: `payload` is the event's `data`, in the API's own shapes. */
export interface OutboxEvent {
  organizationId: string;
  type: string;
  payload: unknown;
}

export function newEventId(): string {
  return `evt_${randomBytes(16).toString('base64url')}`;
}

/** SQL for a new delivery's id (`whd_…`), made by the statement that inserts it. */
export const DELIVERY_ID_SQL = `'whd_' || replace(gen_random_uuid()::text, '-', '')`;

/**
 * Fans events out to their subscribed endpoints, in the caller's transaction. `events` is a CTE (or
 * table expression) with columns (id, organization_id, type, body, n) where body is JSON text and n
 * the order the events' deliveries are queued in: the
 * events no endpoint subscribes to are not stored. Returns the CTE definitions to append after it
 * (`, ev AS …, dl AS …, wake AS …`); select `(SELECT count(*) FROM wake)` to make them run.
 */
export function fanOutCtes(events: string): string {
  return `, ev AS (
      INSERT INTO webhook_events (id, organization_id, type, payload)
      SELECT w.id, w.organization_id, w.type, w.body::json FROM ${events} w
      WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.organization_id = w.organization_id AND e.status = 'enabled' AND w.type = ANY (e.events))
      RETURNING id, organization_id, type),
    dl AS (
      INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, status)
      SELECT ${DELIVERY_ID_SQL}, ev.organization_id, e.id, ev.id, 'pending'
      FROM ${events} w JOIN ev ON ev.id = w.id
      JOIN webhook_endpoints e ON e.organization_id = ev.organization_id AND e.status = 'enabled' AND ev.type = ANY (e.events)
      ORDER BY w.n, e.id
      RETURNING 1),
    wake AS (SELECT pg_notify('${WEBHOOKS_CHANNEL}', '') FROM (SELECT count(*) AS n FROM dl) c WHERE c.n > 0)`;
}

/** Writes events in `tx` (the transaction of their change); how many deliveries were queued. */
export async function writeOutbox(tx: Queryable, events: readonly OutboxEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const [row] = await tx.query<{ queued: number }>(
    `WITH w AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS w(id, organization_id, type, body, n))
     ${fanOutCtes('w')}
     SELECT (SELECT count(*) FROM dl)::int AS queued, (SELECT count(*) FROM wake)::int AS woke`,
    [events.map(() => newEventId()), events.map((e) => e.organizationId), events.map((e) => e.type), events.map((e) => JSON.stringify(e.payload))],
  );
  return row!.queued;
}
