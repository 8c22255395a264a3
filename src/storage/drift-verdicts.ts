// Completed weeks' drift verdicts (migrations/016_webhooks.sql), kept for the organizations that
// subscribe an endpoint to `drift.verdict_changed`: the first process to store a week's verdict
// announces a change from the week before, in the same transaction, so several processes watching
// at once announce it once. A system task's statements (like the rings' windows): each names the
// organization it was given by the watch, which reads nothing else of it.

import type { Db, Queryable } from './db.ts';
import { writeOutbox } from './webhook-outbox.ts';

export interface StoredVerdict {
  week: string;
  verdict: string | null;
  reasons: string[];
  basis: string | null;
}

/** Organizations with an enabled endpoint subscribed to `drift.verdict_changed`. */
export async function organizationsWatchingDrift(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ organization_id: string }>(
    `SELECT DISTINCT organization_id FROM webhook_endpoints WHERE status = 'enabled' AND 'drift.verdict_changed' = ANY (events) ORDER BY organization_id`,
  );
  return rows.map((r) => r.organization_id);
}

export async function storedVerdict(db: Queryable, organizationId: string, week: string): Promise<StoredVerdict | undefined> {
  const [row] = await db.query<StoredVerdict>(`SELECT week, verdict, reasons, basis FROM drift_verdicts WHERE organization_id = $1 AND week = $2`, [
    organizationId,
    week,
  ]);
  return row;
}

/**
 * Stores a week's verdict unless a process already did; when this call stored it and it differs
 * from `previous` (both known), writes the `drift.verdict_changed` event in the same transaction.
 * True when it announced a change.
 */
export async function recordVerdict(db: Db, organizationId: string, v: StoredVerdict, previous: StoredVerdict | undefined): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [stored] = await tx.query(
      `INSERT INTO drift_verdicts (organization_id, week, verdict, reasons, basis) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (organization_id, week) DO NOTHING RETURNING week`,
      [organizationId, v.week, v.verdict, v.reasons, v.basis],
    );
    if (!stored || !previous || previous.verdict === null || v.verdict === null || previous.verdict === v.verdict) return false;
    await writeOutbox(tx, [
      {
        organizationId,
        type: 'drift.verdict_changed',
        payload: { week: v.week, verdict: v.verdict, previous_verdict: previous.verdict, previous_week: previous.week, reasons: v.reasons, basis: v.basis },
      },
    ]);
    return true;
  });
}
