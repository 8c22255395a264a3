// Data protection as use cases (docs/operating.md, "Data protection"): every member reads the
// organization's retention period; owners change it, export a customer's records in one document,
// ask for a customer's erasure and read the erasures and the audit; the organization's server asks
// for an erasure with its key (a customer's request that reached it). An erasure is recorded and
// answered at once (202); the sweeper (sweeper.ts) runs it within seconds. A customer is named by
// the request and by the export only: the audit and the erasures name it by a keyed hash.

import { createHmac, randomBytes } from 'node:crypto';
import {
  type CustomerExport,
  type DataProtectionAudit,
  DEFAULT_RETENTION_DAYS,
  type Erasure,
  type ErasureAccepted,
  type ErasureList,
  type ErasureRequest,
  MAX_RETENTION_DAYS,
  MIN_RETENTION_DAYS,
  type Retention,
} from '../../contract/data-protection.ts';
import type { DecisionLog } from '../../live/decision-log.ts';
import type { ErasureRow, SweepCounts } from '../../storage/data-protection.ts';
import { organizationData } from '../../storage/organization-data.ts';
import type { OrganizationCaller } from '../access/organization-caller.ts';
import { requireCapability } from '../access/roles.ts';
import { caseDetail } from '../cases/cases.ts';
import { transactionRecord } from '../decisions/transaction-record.ts';
import { AppError } from '../errors.ts';
import { isoTime, isoTimeOrNull } from '../../domain/iso-time.ts';
import type { PolicyDeps } from '../policy/lists.ts';

export interface DataProtectionDeps extends PolicyDeps {
  decisionLog: DecisionLog;
  /** The server's hashing secret (the customer's keyed hash); undefined where none is set. */
  secret: string | undefined;
  /** Runs the pending erasures now (sweeper.ts). */
  erasureRequested: () => void;
}

const now = (deps: Pick<PolicyDeps, 'clock'>) => (deps.clock ?? Date.now)();
const USE_KINDS = { m: 'merchant', h: 'channel', l: 'location' } as const;

/** The customer's keyed hash in an organization: HMAC-SHA-256 of both with the server's secret. */
export function customerHash(secret: string, organizationId: string, customerId: string): string {
  return createHmac('sha256', secret).update(`customer\n${organizationId}\n${customerId}`, 'utf8').digest('hex');
}

function hashOf(deps: DataProtectionDeps, caller: OrganizationCaller, customerId: string): string {
  if (!deps.secret)
    throw new AppError(
      'auth_not_configured',
      "A customer's keyed hash needs the server's secret, and this server has none.",
      'Set SESSION_SECRET (the same value in every server process sharing the database) and restart.',
    );
  return customerHash(deps.secret, caller.organizationId, customerId);
}

const data = (deps: Pick<PolicyDeps, 'db'>, caller: OrganizationCaller) => organizationData(deps.db, caller.organizationId).dataProtection;

/** The retention period and the latest sweep; for every member. */
export async function retention(deps: Pick<PolicyDeps, 'db'>, caller: OrganizationCaller): Promise<Retention> {
  const part = data(deps, caller);
  const [
    days,
    {
      rows: [sweep],
    },
  ] = await Promise.all([part.retention(), part.audit(1, { action: 'retention_swept' })]);
  const detail = sweep?.detail as { cutoff_ms: number; counts: SweepCounts } | undefined;
  return {
    days,
    default_days: DEFAULT_RETENTION_DAYS,
    minimum_days: MIN_RETENTION_DAYS,
    maximum_days: MAX_RETENTION_DAYS,
    last_sweep: sweep && detail ? { at: isoTime(sweep.at_ms), cutoff: isoTime(detail.cutoff_ms), counts: detail.counts } : null,
  };
}

/** Sets the retention period (owners), audited; the next sweep deletes by it. */
export async function setRetention(deps: Pick<PolicyDeps, 'db' | 'clock'>, caller: OrganizationCaller, days: number): Promise<Retention> {
  requireCapability(caller.role, 'manageDataProtection');
  await data(deps, caller).setRetention(days, caller.by, now(deps));
  return retention(deps, caller);
}

/** Every record naming the customer, in one document (owners); audited by the customer's hash. */
export async function exportCustomer(deps: DataProtectionDeps, caller: OrganizationCaller, customerId: string): Promise<CustomerExport> {
  requireCapability(caller.role, 'manageDataProtection');
  const hash = hashOf(deps, caller, customerId);
  const org = organizationData(deps.db, caller.organizationId);
  await deps.decisionLog.flush();
  const transactions: CustomerExport['transactions'] = [];
  let after: string | undefined;
  for (;;) {
    const page = await org.transactions.list({ customer_id: customerId, order: 'oldest' }, 500, after);
    if (!page) break;
    const changes = await org.outcomes.changes(page.rows.map((r) => r.seq));
    for (const row of page.rows) transactions.push(transactionRecord(row, changes.get(row.seq) ?? []));
    if (!page.hasMore || page.rows.length === 0) break;
    after = page.rows[page.rows.length - 1]!.transaction_id;
  }
  const part = org.dataProtection;
  const [items, caseIds, events, aggregates] = await Promise.all([
    part.listItems(customerId),
    part.caseIds(customerId),
    part.webhookEvents(customerId),
    part.aggregates(customerId),
  ]);
  const cases = [];
  for (const id of caseIds) cases.push(await caseDetail(deps, caller, id));
  const at = now(deps);
  const answer: CustomerExport = {
    organization_id: caller.organizationId,
    customer_id: customerId,
    exported_at: isoTime(at),
    transactions,
    lists: items.map((i) => ({
      list: i.list,
      kind: i.kind,
      value: i.value,
      added_at: isoTime(i.added_at_ms),
      added_by: i.added_by,
      reason: i.reason,
      expires_at: isoTimeOrNull(i.expires_at_ms),
      removed_at: isoTimeOrNull(i.removed_at_ms),
    })),
    cases,
    webhook_events: events.map((e) => ({ id: e.id, type: e.type, created_at: e.created_at.toISOString(), payload: e.payload })),
    totals: aggregates.totals && {
      transactions: aggregates.totals.transactions,
      amount_sum: aggregates.totals.amount_sum,
      last_at: isoTime(aggregates.totals.last_ms),
      labels: aggregates.totals.labels,
      frauds: aggregates.totals.frauds,
      first_fraud_known_at: isoTimeOrNull(aggregates.totals.first_fraud_known_ms),
    },
    uses: aggregates.uses.map((u) => ({ kind: USE_KINDS[u.kind as keyof typeof USE_KINDS], key: u.key, first_at: isoTime(u.first_ms) })),
  };
  await part.auditExport(hash, caller.by, at, {
    transactions: transactions.length,
    lists: answer.lists.length,
    cases: cases.length,
    webhook_events: answer.webhook_events.length,
  });
  return answer;
}

/** Asks for the customer's erasure (owners, or the organization's key): recorded pending and run
 *  within seconds. Lists named in `keep_lists` must be the organization's. */
export async function requestErasure(deps: DataProtectionDeps, caller: OrganizationCaller, customerId: string, body: ErasureRequest): Promise<ErasureAccepted> {
  requireCapability(caller.role, 'eraseCustomers');
  const hash = hashOf(deps, caller, customerId);
  const keep = [...new Set(body.keep_lists ?? [])];
  if (keep.length) {
    const lists = organizationData(deps.db, caller.organizationId).lists;
    const at = now(deps);
    const found = await Promise.all(keep.map((n) => lists.named(n, at)));
    const unknown = keep.filter((_, i) => !found[i]);
    if (unknown.length)
      throw new AppError(
        'not_found',
        `keep_lists names ${unknown.length === 1 ? 'a list' : 'lists'} the organization does not have: ${unknown.join(', ')}.`,
        "Name the organization's lists as GET /api/organizations/{id}/lists shows them, or leave keep_lists out.",
      );
  }
  const row = await data(deps, caller).requestErasure({
    id: `er_${randomBytes(12).toString('base64url')}`,
    customerId,
    customerHash: hash,
    keepLists: keep,
    by: caller.by,
    at: now(deps),
  });
  deps.erasureRequested();
  return { id: row.id, status: row.status };
}

function erasureView(r: ErasureRow): Erasure {
  return {
    id: r.id,
    status: r.status,
    customer_hash: r.customer_hash,
    requested_by: r.requested_by,
    requested_at: isoTime(r.requested_at_ms),
    done_at: isoTimeOrNull(r.done_at_ms),
    keep_lists: r.keep_lists,
    counts: r.counts,
    kept: r.kept ? r.kept.map((k) => ({ list: k.list, reason: k.reason })) : null,
  };
}

/** The organization's erasures, newest first (owners). */
export async function erasures(deps: Pick<PolicyDeps, 'db'>, caller: OrganizationCaller, limit: number, startingAfter?: string): Promise<ErasureList> {
  requireCapability(caller.role, 'manageDataProtection');
  const page = await data(deps, caller).erasures(limit, startingAfter);
  if (!page)
    throw new AppError(
      'not_found',
      `starting_after names no erasure ${startingAfter} of this organization.`,
      'Pass the id of the last erasure of the previous page.',
    );
  return { data: page.rows.map(erasureView), has_more: page.hasMore };
}

/** The data-protection audit, newest first (owners). */
export async function dataProtectionAudit(
  deps: Pick<PolicyDeps, 'db'>,
  caller: OrganizationCaller,
  limit: number,
  startingAfter?: string,
): Promise<DataProtectionAudit> {
  requireCapability(caller.role, 'manageDataProtection');
  const page = await data(deps, caller).audit(limit, { startingAfter: startingAfter === undefined ? undefined : Number(startingAfter) });
  return {
    data: page.rows.map((r) => ({ id: String(r.id), at: isoTime(r.at_ms), by: r.by, action: r.action, detail: r.detail })),
    has_more: page.hasMore,
  };
}
