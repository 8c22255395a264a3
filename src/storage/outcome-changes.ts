// Outcomes of an organization's recorded transactions: setting them (each change kept in
// `outcome_changes` and sent on the live feed) and reading a transaction's changes back. Outcome
// writers take the feed's outcome lock first (live-feed.ts `lockOutcomes`), because a later outcome
// of a transaction replaces an earlier one and every process must apply them in the same order.

import { FEED_SENDER, lockOutcomes, notifyFeed } from './live-feed.ts';
import type { OutcomeChangeRow } from './live-rows.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { writeOutbox, type OutboxEvent } from './webhook-outbox.ts';

/** An outcome to set: `label` known from `reported_at_ms`. */
export interface OutcomeInput {
  transaction_id: string;
  label: 0 | 1;
  source: string;
  reported_at_ms: number;
  reported_by: string;
}

export type OutcomeResult =
  | { transaction_id: string; status: 'applied'; changed: boolean; seq: number; label: 0 | 1; known_ms: number }
  | { transaction_id: string; status: 'not_found' }
  | { transaction_id: string; status: 'invalid'; message: string };

/** An outcome that changed, as its webhook events are made from it (`announce`). */
export interface AppliedOutcome {
  transaction_id: string;
  from_label: 0 | 1 | null;
  to_label: 0 | 1;
  source: string;
  reported_at_ms: number;
  reported_by: string;
}

/** Every outcome change of these transactions (by seq), oldest first. */
export async function outcomeChanges(scope: OrganizationScope, seqs: readonly number[]): Promise<Map<number, OutcomeChangeRow[]>> {
  const out = new Map<number, OutcomeChangeRow[]>();
  if (seqs.length === 0) return out;
  const rows = await scope.db.query<OutcomeChangeRow>(
    `SELECT transaction_seq, from_label, to_label, source, reported_at_ms, reported_by FROM outcome_changes
     WHERE organization_id = $1 AND transaction_seq = ANY($2::bigint[]) ORDER BY transaction_seq, id`,
    [scope.organizationId, seqs],
  );
  for (const r of rows) {
    const list = out.get(r.transaction_seq);
    if (list) list.push(r);
    else out.set(r.transaction_seq, [r]);
  }
  return out;
}

/**
 * Sets outcomes in one database transaction, in the order given (a later one for the same
 * transaction wins). An id the organization does not have is `not_found`; a `reported_at` before
 * the transaction is `invalid`; either leaves everything as it was. Setting the outcome a
 * transaction already has changes nothing (its first report stands). Each change is kept in
 * `outcome_changes`. `xid`: the database transaction that wrote the changes (none when nothing
 * changed), for a caller that waits until its live tail has applied them.
 */
export async function applyOutcomes(
  scope: OrganizationScope,
  inputs: readonly OutcomeInput[],
  announce?: (changes: readonly AppliedOutcome[]) => Omit<OutboxEvent, 'organizationId'>[],
): Promise<{ results: OutcomeResult[]; xid: number | undefined }> {
  return scope.db.transaction(async (tx) => {
    await lockOutcomes(tx);
    const ids = [...new Set(inputs.map((i) => i.transaction_id))];
    const found = await tx.query<{ seq: number; transaction_id: string; time_ms: number; label: 0 | 1 | null; label_known_ms: number | null }>(
      'SELECT seq, transaction_id, time_ms, label, label_known_ms FROM transactions WHERE organization_id = $1 AND transaction_id = ANY($2::text[]) FOR UPDATE',
      [scope.organizationId, ids],
    );
    const current = new Map(found.map((r) => [r.transaction_id, { ...r }]));
    const results: OutcomeResult[] = [];
    const changes: (OutcomeChangeRow & { transaction_id: string; from_known_ms: number | null })[] = [];
    for (const input of inputs) {
      const row = current.get(input.transaction_id);
      if (!row) {
        results.push({ transaction_id: input.transaction_id, status: 'not_found' });
        continue;
      }
      if (input.reported_at_ms < row.time_ms) {
        results.push({
          transaction_id: input.transaction_id,
          status: 'invalid',
          message: `reported_at ${new Date(input.reported_at_ms).toISOString()} is before the transaction (${new Date(row.time_ms).toISOString()}).`,
        });
        continue;
      }
      if (row.label === input.label) {
        results.push({
          transaction_id: input.transaction_id,
          status: 'applied',
          changed: false,
          seq: row.seq,
          label: row.label,
          known_ms: row.label_known_ms!,
        });
        continue;
      }
      changes.push({
        transaction_id: row.transaction_id,
        transaction_seq: row.seq,
        from_label: row.label,
        from_known_ms: row.label_known_ms,
        to_label: input.label,
        source: input.source,
        reported_at_ms: input.reported_at_ms,
        reported_by: input.reported_by,
      });
      row.label = input.label;
      row.label_known_ms = input.reported_at_ms;
      results.push({
        transaction_id: input.transaction_id,
        status: 'applied',
        changed: true,
        seq: row.seq,
        label: input.label,
        known_ms: input.reported_at_ms,
      });
    }
    if (changes.length > 0) {
      await tx.query(
        `INSERT INTO outcome_changes (organization_id, transaction_seq, from_label, to_label, source, reported_at_ms, reported_by, from_known_ms)
         SELECT $1, * FROM unnest($2::bigint[], $3::int2[], $4::int2[], $5::text[], $6::float8[], $7::text[], $8::float8[])`,
        [
          scope.organizationId,
          changes.map((c) => c.transaction_seq),
          changes.map((c) => c.from_label),
          changes.map((c) => c.to_label),
          changes.map((c) => c.source),
          changes.map((c) => c.reported_at_ms),
          changes.map((c) => c.reported_by),
          changes.map((c) => c.from_known_ms),
        ],
      );
      // The last change of each transaction is its current outcome.
      const last = new Map(changes.map((c) => [c.transaction_seq, c]));
      const final = [...last.values()];
      await tx.query(
        `UPDATE transactions AS t SET label = u.label, label_known_ms = u.known, outcome_source = u.source, outcome_reported_by = u.reported_by
         FROM unnest($2::bigint[], $3::int2[], $4::float8[], $5::text[], $6::text[]) AS u(seq, label, known, source, reported_by)
         WHERE t.organization_id = $1 AND t.seq = u.seq`,
        [
          scope.organizationId,
          final.map((c) => c.transaction_seq),
          final.map((c) => c.to_label),
          final.map((c) => c.reported_at_ms),
          final.map((c) => c.source),
          final.map((c) => c.reported_by),
        ],
      );
      // Its webhook events, in the same transaction (the outbox): sent only if this commits.
      if (announce)
        await writeOutbox(
          tx,
          announce(changes).map((e) => ({ ...e, organizationId: scope.organizationId })),
        );
      const [row] = await tx.query<{ xid: string }>(`SELECT pg_current_xact_id()::text AS xid, ${notifyFeed(1)}`, [FEED_SENDER]);
      return { results, xid: Number(row!.xid) };
    }
    return { results, xid: undefined };
  });
}
