// The decision log of an organization and the outcomes reported on it, as use cases for both
// surfaces (routes/transactions.ts): an API key reads and reports on its own organization's
// transactions; a member does the same from the dashboard, lists them with filters and cursor
// paging, and reads a customer's or merchant's summary, each answered in the contract's shape
// (contract/transactions.ts). Every read goes through the organization's `OrganizationData`
// (storage/organization-data.ts: its transactions and outcomes), bound to the organization the
// caller acts for (organization-caller.ts: the one the key or the membership names), so another
// organization's transaction is simply not found. Each read flushes the write-behind queue first
// (live/decision-log.ts), so a transaction answered a moment ago is read back.

import { AppError } from '../errors.ts';
import type { OrganizationCaller } from '../access/organization-caller.ts';
import { requireCapability } from '../access/roles.ts';
import { reportOutcomes, type OutcomeReport } from './outcomes.ts';
import { transactionRecord } from './transaction-record.ts';
import type { BulkResult, Entity, TransactionPage, TransactionRecord } from '../../contract/transactions.ts';
import type { Db } from '../../storage/db.ts';
import type { EntitySummary } from '../../storage/entity-evidence.ts';
import { organizationData, type OrganizationData } from '../../storage/organization-data.ts';
import type { ListFilters } from '../../storage/transaction-reads.ts';
import { keyEntry } from '../../domain/fields.ts';
import type { DecisionLog } from '../../live/decision-log.ts';
import type { LiveTail } from '../../live/tail.ts';
import { isoTime, isoTimeOrNull } from '../../domain/iso-time.ts';

/** How many of an entity's latest transactions its `recent` figures cover (for the reference). */
export { ENTITY_RECENT } from '../../storage/entity-evidence.ts';

/** What these use cases need of the service. */
export interface DecisionLogDeps {
  db: Db;
  /** Flushed before every read: transactions answered a moment ago may not be stored yet. */
  decisionLog: DecisionLog;
  /** Waited on after outcomes are applied, so this process's next request sees them. */
  tail: LiveTail;
  /** When an outcome reported now becomes known (the service's clock). */
  clock?: () => number;
}

/** The listing's filters: times in epoch ms (`from` inclusive, `to` exclusive); `fields`, values
 *  of the organization's key fields by name. */
export type DecisionFilters = Omit<ListFilters, 'field_keys'> & { fields?: Readonly<Record<string, string>> | undefined };

/** The key values a listing filters on, each checked to be a key field the organization declares
 *  now (else `validation_failed` naming `query.field.<name>`). */
async function keyFilters(data: OrganizationData, fields: Readonly<Record<string, string>> | undefined): Promise<string[] | undefined> {
  const names = Object.keys(fields ?? {});
  if (names.length === 0) return undefined;
  const keys = new Set((await data.fields.all()).filter((f) => f.key).map((f) => f.name));
  const wrong = names.filter((n) => !keys.has(n));
  if (wrong.length)
    throw new AppError(
      'validation_failed',
      `Only the organization's key fields can be filtered on, and ${wrong.map((n) => `field.${n}`).join(', ')} ${wrong.length === 1 ? 'is not one' : 'are not'}.`,
      "Filter on a field declared with key: true (GET the organization's fields), or leave the filter out.",
      { fields: wrong.map((n) => ({ path: `query.field.${n}`, message: `${n} is not a key field of this organization` })) },
    );
  return names.map((n) => keyEntry(n, fields![n]!));
}

const notFound = (id: string) =>
  new AppError(
    'not_found',
    `No transaction ${id} in this organization.`,
    'Check the transaction_id: it is the one sent with (or returned by) the score request.',
  );

/** One record with its outcome history, or `not_found`. */
async function readRecord(deps: DecisionLogDeps, data: OrganizationData, transactionId: string): Promise<TransactionRecord> {
  await deps.decisionLog.flush();
  const row = await data.transactions.get(transactionId);
  if (!row) throw notFound(transactionId);
  const changes = await data.outcomes.changes([row.seq]);
  return transactionRecord(row, changes.get(row.seq) ?? []);
}

/** A recorded transaction of the caller's organization, with its outcome history. */
export function decisionRecord(deps: DecisionLogDeps, caller: OrganizationCaller, transactionId: string): Promise<TransactionRecord> {
  return readRecord(deps, organizationData(deps.db, caller.organizationId), transactionId);
}

/** A page of the organization's records after `startingAfter` (a transaction_id of the previous
 *  page), or `not_found` for a cursor the organization does not have. */
export async function decisionList(
  deps: DecisionLogDeps,
  caller: OrganizationCaller,
  filters: DecisionFilters,
  limit: number,
  startingAfter: string | undefined,
): Promise<TransactionPage> {
  const data = organizationData(deps.db, caller.organizationId);
  const { fields, ...rest } = filters;
  const field_keys = await keyFilters(data, fields);
  await deps.decisionLog.flush();
  const page = await data.transactions.list({ ...rest, field_keys }, limit, startingAfter);
  if (!page)
    throw new AppError(
      'not_found',
      `starting_after names no transaction ${startingAfter} in this organization.`,
      'Pass the transaction_id of the last item of the previous page.',
    );
  return { data: page.rows.map((row) => transactionRecord(row)), has_more: page.hasMore };
}

/** A customer's or merchant's totals, recent decisions and counterparties in the organization, or
 *  `not_found` when it has no transaction of it. */
export async function entitySummary(deps: DecisionLogDeps, caller: OrganizationCaller, role: Entity['role'], id: string): Promise<Entity> {
  await deps.decisionLog.flush();
  const e = await organizationData(deps.db, caller.organizationId).transactions.entity(role, id);
  if (!e)
    throw new AppError(
      'not_found',
      `No transaction of ${role} ${id} in this organization.`,
      `Check the ${role} id: it is matched exactly, as it was sent with the transactions.`,
    );
  return entityView(role, id, e);
}

/** A key field's value's totals, recent decisions and the customers who paid with it, or
 *  `not_found` when the field is not a key field of the organization's or no transaction carried
 *  the value while it was. */
export async function keyValueSummary(deps: DecisionLogDeps, caller: OrganizationCaller, field: string, value: string): Promise<Entity> {
  const data = organizationData(deps.db, caller.organizationId);
  const declared = await data.fields.one(field);
  if (!declared?.key || declared.retired_at_ms !== null)
    throw new AppError(
      'not_found',
      `${field} is not a key field of this organization.`,
      "Check the field's name (GET the organization's fields): only key fields' values have a page.",
    );
  await deps.decisionLog.flush();
  const e = await data.transactions.entity('key', keyEntry(field, value));
  if (!e)
    throw new AppError(
      'not_found',
      `No transaction carried ${field} ${value} in this organization.`,
      'Values are matched exactly, as they were sent, and counted from when the field was a key.',
    );
  return { ...entityView('key', value, e), field };
}

/** An entity's summary as answered: times as ISO text, its counterparties of the other role. */
export function entityView(role: Entity['role'], id: string, e: EntitySummary): Entity {
  const other = role === 'customer' ? 'merchant' : 'customer';
  return {
    role,
    id,
    totals: {
      transactions: e.totals.transactions,
      amount_sum: e.totals.amount_sum,
      last_time: isoTime(e.totals.last_ms),
      labelled: e.totals.labels,
      fraud: e.totals.frauds,
    },
    recent: {
      transactions: e.recent.transactions,
      first_time: isoTimeOrNull(e.recent.first_ms),
      reviewed: e.recent.reviewed,
      blocked: e.recent.blocked,
    },
    counterparties: e.counterparties.map((c) => ({
      role: other,
      id: c.id,
      transactions: c.transactions,
      amount_sum: c.amount_sum,
      labelled: c.labelled,
      fraud: c.fraud,
      last_time: isoTime(c.last_ms),
    })),
  };
}

/** Reports one outcome and answers the record, or `not_found` / `invalid` with nothing changed. */
export async function reportOutcome(deps: DecisionLogDeps, caller: OrganizationCaller, report: OutcomeReport): Promise<TransactionRecord> {
  requireCapability(caller.role, 'reportOutcomes');
  const data = organizationData(deps.db, caller.organizationId);
  const [result] = await reportOutcomes(deps.decisionLog, deps.tail, data.outcomes, [report], caller.by, (deps.clock ?? Date.now)());
  if (result!.status === 'not_found') throw notFound(report.transaction_id);
  if (result!.status === 'invalid') {
    throw new AppError('validation_failed', result!.message, "Send reported_at between the transaction's time and now, or leave it out to mean now.", {
      fields: [{ path: 'body.reported_at', message: result!.message }],
    });
  }
  return readRecord(deps, data, report.transaction_id);
}

/** Reports outcomes in order; each gets a status (and, unless applied, why). */
export async function reportOutcomesInBulk(deps: DecisionLogDeps, caller: OrganizationCaller, reports: readonly OutcomeReport[]): Promise<BulkResult> {
  requireCapability(caller.role, 'reportOutcomes');
  const outcomes = organizationData(deps.db, caller.organizationId).outcomes;
  const results = await reportOutcomes(deps.decisionLog, deps.tail, outcomes, reports, caller.by, (deps.clock ?? Date.now)());
  return {
    results: results.map((r) =>
      r.status === 'applied'
        ? { transaction_id: r.transaction_id, status: r.status }
        : r.status === 'not_found'
          ? { transaction_id: r.transaction_id, status: r.status, message: 'No such transaction in this organization.' }
          : { transaction_id: r.transaction_id, status: r.status, message: r.message },
    ),
  };
}
