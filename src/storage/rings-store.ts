// Ring analyses of an organization (src/live/ring-windows.ts): the transactions of a window to
// analyse, the rings found in it stored on its `ring_windows` row, and the latest windows' rings
// read back. Storing them wakes every process (NOTIFY on RINGS_CHANNEL) to read the organization's
// latest windows. Every statement reads the scope's organization only (organization-scope.ts).

import type { Ring } from '../domain/rings.ts';
import type { Transaction } from '../domain/transaction.ts';
import type { OrganizationScope } from './organization-scope.ts';

/** The NOTIFY channel on which a stored ring analysis tells every process (src/live/ring-windows.ts). */
export const RINGS_CHANNEL = 'ring_windows';

/** How much of a window one statement reads. A week of a busy organization is tens of thousands of
 *  rows; read in one statement, running it and parsing its result would hold every request for
 *  that long. A slice of the window is a plain index range and little work, and the event loop
 *  serves requests between slices. */
export const WINDOW_SLICE_MS = 2 * 3_600_000;

/** A window's transactions as the database gives them: a JSON array of
 *  `[time_ms, amount, customer_id, merchant_id, location, payment_type, label, label_known_ms]`. The
 *  rings job hands this text to a worker thread as it is: one string to copy, where an array of
 *  objects would be cloned field by field, and decoded there (`decodeWindow`), off the event loop. */
export type WindowRows = string;

type WindowTuple = [number, number, string, string, string, string, 0 | 1 | null, number | null];

/** The transactions in [from, to), in time order, with their current outcomes (a ring window's),
 *  read a slice at a time. */
export async function windowRows(scope: OrganizationScope, from: number, to: number): Promise<{ rows: WindowRows; count: number }> {
  const parts: string[] = [];
  let count = 0;
  for (let at = from; at < to; at += WINDOW_SLICE_MS) {
    const [slice] = await scope.db.query<{ rows: string | null; n: number }>(
      `SELECT json_agg(json_build_array(time_ms, amount, customer_id, merchant_id, location, payment_type, label, label_known_ms) ORDER BY time_ms, seq)::text AS rows, count(*)::int AS n
       FROM transactions WHERE organization_id = $1 AND time_ms >= $2 AND time_ms < $3`,
      [scope.organizationId, at, Math.min(to, at + WINDOW_SLICE_MS)],
    );
    // Each slice is `[…]`: their insides joined make one array.
    if (slice?.rows) {
      parts.push(slice.rows.slice(1, -1));
      count += slice.n;
    }
    // Let the event loop run: the embedded database answers without giving it a turn otherwise.
    await new Promise(setImmediate);
  }
  return { rows: `[${parts.join(',')}]`, count };
}

export function decodeWindow(rows: WindowRows): Transaction[] {
  return (JSON.parse(rows) as WindowTuple[]).map((r) => ({
    time: r[0],
    amount: r[1],
    customer_id: r[2],
    merchant_id: r[3],
    location: r[4],
    payment_type: r[5],
    ...(r[6] === null ? {} : { label: r[6], labelKnownAt: r[7]! }),
  }));
}

/** Transactions in the same form (what a caller with rows in hand sends the worker). */
export function encodeWindow(rows: readonly Transaction[]): WindowRows {
  return JSON.stringify(
    rows.map(
      (r): WindowTuple => [
        r.time,
        r.amount,
        r.customer_id,
        r.merchant_id,
        r.location,
        r.payment_type,
        r.label ?? null,
        r.label === undefined ? null : (r.labelKnownAt ?? null),
      ],
    ),
  );
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
