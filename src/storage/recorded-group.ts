// The decision log's group commit (src/live/decision-log.ts): the scored transactions of several
// organizations stored together. It stands outside OrganizationData because one statement spans
// organizations; it reads nothing back but what it inserted, so it is no way around the scope.

import type { Db, Queryable } from './db.ts';
import { joinCtes, type CaseJoin } from './cases-store.ts';
import { organizationData } from './organization-data.ts';
import { retryConflicts } from './errors.ts';
import { FEED_SENDER, notifyFeed, type FeedPosition } from './live-feed.ts';
import type { NewTransaction } from './live-rows.ts';
import { CHUNK_ROWS, INSERT_ROWS, checkFinite, insertParams } from './transaction-insert.ts';
import { fanOutCtes, newEventId } from './webhook-outbox.ts';

/** Scored transactions of several organizations, each as its key's organization decided. */
export interface GroupRow {
  organizationId: string;
  row: NewTransaction;
}

/**
 * The decision log's group commit: stores the scored transactions of several organizations with
 * one statement per chunk, each its own database transaction (one round trip, commit included,
 * the feed's NOTIFY queued in a CTE). Several groups may be written at once: the feed's order needs
 * no lock (src/storage/live-feed.ts). A transaction decided `review` or `block` is also a webhook
 * event (`decision.review`, `decision.block`, its data the response answered), written by the same
 * statement for the organization's subscribed endpoints (webhook-outbox.ts): the outbox rides the
 * group commit, and a duplicate id (not inserted) is no event. `wants` says which organizations may
 * have such an endpoint (live/decision-subscriptions.ts): the others' flagged rows add nothing to the
 * statement, and a chunk with none is the plain insert. Returns, per organization, the ids stored with their feed
 * positions; an id the organization already had is left out. A write only: every row carries the
 * organization its API key belongs to, and nothing is read back but what was inserted.
 */
export async function recordGroup(
  db: Db,
  group: readonly GroupRow[],
  wants: (organizationId: string, type: string) => boolean = () => true,
): Promise<Map<string, Map<string, FeedPosition>>> {
  const stored = new Map<string, Map<string, FeedPosition>>();
  for (const g of group) if (!stored.has(g.organizationId)) stored.set(g.organizationId, new Map());
  checkFinite(group.map((g) => g.row));
  // In key order, as the totals' upserts lock theirs: two groups inserting the same ids (a retry
  // sent to two processes) wait for each other rather than deadlock.
  const ordered = [...group].sort((a, b) => compare(a.organizationId, b.organizationId) || compare(a.row.transaction_id, b.row.transaction_id));
  for (let start = 0; start < ordered.length; start += CHUNK_ROWS) {
    const chunk = ordered.slice(start, start + CHUNK_ROWS);
    const params = insertParams(
      chunk.map((g) => g.organizationId),
      chunk.map((g) => g.row),
    );
    params.push(FEED_SENDER);
    const sender = params.length;
    const flagged = chunk.filter(
      (g) =>
        (g.row.decision?.decision === 'review' || g.row.decision?.decision === 'block') &&
        g.row.response &&
        wants(g.organizationId, `decision.${g.row.decision.decision}`),
    );
    let events = '';
    if (flagged.length > 0) {
      params.push(
        flagged.map(() => newEventId()),
        flagged.map((g) => g.organizationId),
        flagged.map((g) => g.row.transaction_id),
        flagged.map((g) => `decision.${g.row.decision!.decision}`),
        flagged.map((g) => eventBody(g.row)),
      );
      const n = params.length - 4;
      events = `, flagged AS (SELECT f.id, f.organization_id, f.type, f.body, f.n
          FROM unnest($${n}::text[], $${n + 1}::text[], $${n + 2}::text[], $${n + 3}::text[], $${n + 4}::text[]) WITH ORDINALITY AS f(id, organization_id, transaction_id, type, body, n)
          JOIN ins ON ins.organization_id = f.organization_id AND ins.transaction_id = f.transaction_id)
        ${fanOutCtes('flagged')}`;
    }
    // Decisions that open or join a case do so with the rows this commit inserted (a duplicate id
    // joins nothing), through the one statement that files them (cases-store.ts joinCtes): no second
    // write path, and one case per entity however many processes record its decisions. When nothing
    // else is to be written for the cases a join may open (no endpoint of the organization waits for
    // `case.opened` or `case.assigned`, and no inbox assigns by itself), the join rides the insert's
    // statement: one round trip, as a commit without cases. Otherwise the commit is a database
    // transaction: the insert, the join, the rotation's assignment and the cases' events.
    const joins = chunk.filter((g) => g.row.case_join).map((g) => ({ organizationId: g.organizationId, join: g.row.case_join! }));
    const followUp = joins.some((x) => x.join.assigns || wants(x.organizationId, 'case.opened') || wants(x.organizationId, 'case.assigned'));
    const folded = joins.length > 0 && !followUp ? `, ${joinCtes(joins, params, 'ins')}` : '';
    const statement = (q: Queryable) =>
      q.query<{ organization_id: string; transaction_id: string; seq: number; xid: string }>(
        events || folded
          ? `WITH notify AS MATERIALIZED (SELECT ${notifyFeed(sender)}), ins AS (${INSERT_ROWS.replace('FROM unnest(', 'FROM notify, unnest(')})
             ${events} ${folded}
             SELECT ins.*${events ? ', (SELECT count(*) FROM wake) AS webhooks' : ''} FROM ins`
          : `WITH notify AS MATERIALIZED (SELECT ${notifyFeed(sender)})
             ${INSERT_ROWS.replace('FROM unnest(', 'FROM notify, unnest(')}`,
        params,
      );
    const insert = followUp
      ? () =>
          db.transaction(async (tx) => {
            const rows = await statement(tx);
            const stored = new Set(rows.map((r) => `${r.organization_id}\0${r.transaction_id}`));
            const byOrganization = new Map<string, CaseJoin[]>();
            for (const { organizationId, join } of joins) {
              if (!stored.has(`${organizationId}\0${join.transaction_id}`)) continue;
              const theirs = byOrganization.get(organizationId);
              if (theirs) theirs.push(join);
              else byOrganization.set(organizationId, [join]);
            }
            for (const [organizationId, theirs] of [...byOrganization].sort(([a], [b]) => compare(a, b))) {
              const data = organizationData(db, organizationId);
              const joined = await data.cases.join(theirs, tx);
              // A case a decision opened is a `case.opened` event, written with it (case-events.ts).
              await data.caseEvents.opened([...new Set(joined.filter((j) => j.opened).map((j) => j.id))], tx);
            }
            return rows;
          })
      : () => statement(db);
    // The key order above makes a deadlock rare; a writer outside this code (a manual UPDATE) can
    // still cause one.
    const inserted = await retryConflicts(insert);
    for (const r of inserted) stored.get(r.organization_id)!.set(r.transaction_id, { seq: r.seq, xid: Number(r.xid) });
  }
  return stored;
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A decision event's body: the score response as the key was answered, and the organization's own
 *  fields the payment was sent with (when it carried any), which the answer does not repeat. */
function eventBody(row: GroupRow['row']): string {
  const response = row.response!;
  if (!row.fields || Object.keys(row.fields).length === 0) return response;
  return `${response.slice(0, response.lastIndexOf('}'))},"fields":${JSON.stringify(row.fields)}}`;
}
