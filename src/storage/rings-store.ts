// Ring analyses of an organization (src/live/ring-windows.ts): the transactions of a window to
// analyse, the rings found in it stored on its `ring_windows` row, and the latest windows' rings
// read back. Storing them wakes every process (NOTIFY on RINGS_CHANNEL) to read the organization's
// latest windows. Every statement reads the scope's organization only (organization-scope.ts).

import type { Ring } from '../domain/rings.ts';
import type { HistoryTransaction, TransactionEntities, TransactionParties } from '../domain/transaction.ts';
import type { OrganizationScope } from './organization-scope.ts';

/** The NOTIFY channel on which a stored ring analysis tells every process (src/live/ring-windows.ts). */
export const RINGS_CHANNEL = 'ring_windows';

/** The transactions in [from, to), in time order, with their current outcomes: a ring window's. */
export async function windowTransactions(scope: OrganizationScope, from: number, to: number): Promise<HistoryTransaction[]> {
  const rows = await scope.db.query<TransactionParties & TransactionEntities & { time_ms: number; label: 0 | 1 | null; label_known_ms: number | null }>(
    `SELECT time_ms, amount, customer_id, merchant_id, location, payment_type, label, label_known_ms FROM transactions
     WHERE organization_id = $1 AND time_ms >= $2 AND time_ms < $3 ORDER BY time_ms, seq`,
    [scope.organizationId, from, to],
  );
  return rows.map((r) => ({
    time: r.time_ms,
    amount: r.amount,
    customer_id: r.customer_id,
    merchant_id: r.merchant_id,
    location: r.location,
    payment_type: r.payment_type,
    ...(r.label === null ? {} : { label: r.label, labelKnownAt: r.label_known_ms! }),
  }));
}

/** Stores the rings found in the window starting at `start` (queued in ring_windows) and tells
 *  every process (NOTIFY on the rings channel with the organization's id). */
export async function storeRings(scope: OrganizationScope, start: number, rings: readonly Ring[]): Promise<void> {
  await scope.db.query(
    `WITH stored AS (UPDATE ring_windows SET rings = $3::text::jsonb, analysed_at = now() WHERE organization_id = $1 AND window_start = $2 RETURNING 1)
     SELECT pg_notify('${RINGS_CHANNEL}', $1) FROM stored`,
    [scope.organizationId, start, JSON.stringify(rings)],
  );
}

/** The rings of the latest `windows` analysed windows, oldest window first. */
export async function storedRings(scope: OrganizationScope, windows: number): Promise<Ring[]> {
  const rows = await scope.db.query<{ rings: Ring[] }>(
    `SELECT rings FROM (SELECT window_start, rings FROM ring_windows WHERE organization_id = $1 AND rings IS NOT NULL ORDER BY window_start DESC LIMIT $2) AS latest
     ORDER BY window_start`,
    [scope.organizationId, windows],
  );
  return rows.flatMap((r) => r.rings);
}
