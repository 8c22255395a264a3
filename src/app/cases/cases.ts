// Cases, as use cases for the dashboard: an organization's inboxes (owners make them, members read
// them) and the cases its decisions open in them (members read them, with their decisions, their
// timeline and whether its hash chain is intact, and export one as a single document an auditor
// can check). Every read and write goes through the organization's OrganizationData, bound to the
// organization the caller acts for, so another organization's inbox or case is simply not found.
// An inbox is answered once this process has applied it (the live feed carries its routing to
// every other process, whose decisions then open cases in it).

import type { Case, CaseDetail, CaseExport, CasePage, Inbox, InboxList, InboxRequest } from '../../contract/cases.ts';
import { parseGroupBy, verifyChain } from '../../domain/cases.ts';
import { checkExpression } from '../../domain/rules/expression.ts';
import type { CaseFilters, CaseRow, InboxRow } from '../../storage/cases-store.ts';
import { organizationData, type OrganizationData } from '../../storage/organization-data.ts';
import type { OrganizationCaller } from '../access/organization-caller.ts';
import { transactionRecord } from '../decisions/transaction-record.ts';
import { AppError } from '../errors.ts';
import type { PolicyDeps } from '../policy/lists.ts';
import { invalidRule, vocabularyNow } from '../policy/rules.ts';

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));
const now = (deps: PolicyDeps) => (deps.clock ?? Date.now)();

function inboxView(i: InboxRow): Inbox {
  return {
    id: i.id,
    name: i.name,
    group_by: i.group_by,
    route: i.route,
    position: i.position,
    on_block: i.on_block,
    sla_hours: i.sla_hours,
    members: i.members,
    created_at: iso(i.created_at_ms),
    created_by: i.created_by,
  };
}

function caseView(c: CaseRow, at: number): Case {
  const key = c.entity_kind === 'key' ? c.entity_key.indexOf('=') : -1;
  return {
    id: c.id,
    inbox_id: c.inbox_id,
    entity:
      key < 0 ? { kind: c.entity_kind, id: c.entity_key, field: null } : { kind: 'key', id: c.entity_key.slice(key + 1), field: c.entity_key.slice(0, key) },
    status: c.status,
    resolution: c.resolution,
    assignee: c.assignee,
    priority: c.priority,
    opened_at: iso(c.opened_at_ms),
    due_at: iso(c.due_at_ms),
    overdue: c.status !== 'closed' && c.due_at_ms < at,
    snoozed_until: isoOrNull(c.snoozed_until_ms),
    closed_at: isoOrNull(c.closed_at_ms),
    updated_at: iso(c.updated_at_ms),
  };
}

function ownersOnly(caller: OrganizationCaller, what: string): void {
  if (caller.role !== 'owner') throw new AppError('forbidden', `Only owners of the organization ${what}.`, 'Ask an owner of the organization to do it.');
}

const invalid = (path: string, message: string, fix: string) => new AppError('validation_failed', message, fix, { fields: [{ path, message }] });

/** The organization's inboxes, in routing order. */
export async function allInboxes(deps: PolicyDeps, caller: OrganizationCaller): Promise<InboxList> {
  return { data: (await organizationData(deps.db, caller.organizationId).cases.inboxes()).map(inboxView) };
}

/** Makes an inbox (owners), last in routing order: its grouping must name a key field the
 *  organization declares, its route must check as a rule's expression does, its members must be
 *  the organization's. */
export async function createInbox(deps: PolicyDeps, caller: OrganizationCaller, body: InboxRequest): Promise<Inbox> {
  ownersOnly(caller, 'make inboxes');
  const data = organizationData(deps.db, caller.organizationId);
  const group = parseGroupBy(body.group_by);
  if (group?.kind === 'key') {
    const field = await data.fields.one(group.field);
    if (!field?.key || field.retired_at_ms !== null)
      throw invalid(
        'body.group_by',
        `${group.field} is not a key field of this organization`,
        'Group by a field declared with key: true, or by customer or merchant.',
      );
  }
  if (body.route !== null) {
    const { language } = await vocabularyNow(data, now(deps));
    const r = checkExpression(body.route, language, new Set());
    if (!r.checked) throw invalidRule(r.problems);
  }
  const known = await data.cases.membersAmong(body.members);
  const strangers = body.members.filter((m) => !known.has(m));
  if (strangers.length)
    throw new AppError(
      'not_a_member',
      `${strangers.join(', ')} ${strangers.length === 1 ? 'is not a member' : 'are not members'} of this organization.`,
      undefined,
      {
        fields: strangers.map((m) => ({ path: `body.members[${body.members.indexOf(m)}]`, message: `${m} is not a member of this organization` })),
      },
    );
  const made = await data.cases.createInbox({
    name: body.name,
    group_by: body.group_by,
    route: body.route,
    on_block: body.on_block,
    sla_hours: body.sla_hours,
    members: body.members,
    escalation_id: null,
    auto_assign_cap: null,
    created_at_ms: now(deps),
    created_by: caller.by,
  });
  if ('taken' in made) throw new AppError('conflict', `An inbox named ${body.name} exists already.`, 'Choose another name.');
  await deps.tail.reach(made.xid);
  return inboxView(made.inbox);
}

/** A page of the organization's cases, the soonest due first. */
export async function caseList(
  deps: PolicyDeps,
  caller: OrganizationCaller,
  q: {
    status?: Case['status'] | undefined;
    inbox_id?: string | undefined;
    assignee?: string | undefined;
    overdue?: boolean | undefined;
    limit: number;
    starting_after?: string | undefined;
  },
): Promise<CasePage> {
  const at = now(deps);
  const filters: CaseFilters = { status: q.status, inbox_id: q.inbox_id, assignee: q.assignee, overdueAt: q.overdue ? at : undefined };
  const page = await organizationData(deps.db, caller.organizationId).cases.list(filters, q.limit, q.starting_after);
  if (!page)
    throw new AppError(
      'not_found',
      `starting_after names no case ${q.starting_after} in this organization.`,
      'Pass the id of the last case of the previous page.',
    );
  return { data: page.rows.map((c) => caseView(c, at)), has_more: page.hasMore };
}

async function detail(deps: PolicyDeps, data: OrganizationData, id: string): Promise<CaseDetail> {
  const row = await data.cases.one(id);
  if (!row) throw new AppError('not_found', `No case ${id} in this organization.`, "Check the case's id (GET the organization's cases).");
  const [ids, timeline] = await Promise.all([data.cases.decisionIds(id), data.cases.timeline(id)]);
  const records = await Promise.all(ids.map((t) => data.transactions.get(t)));
  return {
    ...caseView(row, now(deps)),
    decisions: records.flatMap((r) => (r ? [transactionRecord(r)] : [])),
    timeline: timeline.map((e) => ({ ...e, at: iso(e.at_ms), detail: JSON.parse(e.detail) as unknown })),
    chain: verifyChain(timeline),
  };
}

/** One case with its decisions, its timeline and whether the timeline's chain is intact. */
export function caseDetail(deps: PolicyDeps, caller: OrganizationCaller, id: string): Promise<CaseDetail> {
  return detail(deps, organizationData(deps.db, caller.organizationId), id);
}

/** The case as one document, for an auditor: everything its page shows, with the chain checked. */
export async function exportCase(deps: PolicyDeps, caller: OrganizationCaller, id: string): Promise<CaseExport> {
  const c = await detail(deps, organizationData(deps.db, caller.organizationId), id);
  return { exported_at: iso(now(deps)), organization_id: caller.organizationId, case: c };
}
