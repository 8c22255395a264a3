// Cases, as use cases for the dashboard: an organization's inboxes (owners make them, members read
// them) and the cases its decisions open in them (members read them, with their decisions, their
// timeline and whether its hash chain is intact, and export one as a single document an auditor
// can check). Every read and write goes through the organization's OrganizationData, bound to the
// organization the caller acts for, so another organization's inbox or case is simply not found.
// An inbox is answered once this process has applied it (the live feed carries its routing to
// every other process, whose decisions then open cases in it).

import type { Case, CaseDetail, CaseExport, CasePage, Inbox, InboxList, InboxRequest } from '../../contract/cases.ts';
import { parseGroupBy, type CaseResolution, type CaseStatus } from '../../domain/cases.ts';
import { verifyChain } from '../../domain/case-timeline.ts';
import type { DecisionLog } from '../../live/decision-log.ts';
import { reportOutcomes } from '../decisions/outcomes.ts';
import { checkExpression } from '../../domain/rules/expression.ts';
import { kindsHolding } from '../../domain/rules/lists.ts';
import type { CaseFilters, CaseRow, InboxRow } from '../../storage/cases-store.ts';
import type { Queryable } from '../../storage/db.ts';
import { organizationData, type OrganizationData } from '../../storage/organization-data.ts';
import { caseAnswer } from '../../storage/case-events.ts';
import type { OrganizationCaller } from '../access/organization-caller.ts';
import { entityView } from '../decisions/decisions.ts';
import { transactionRecord } from '../decisions/transaction-record.ts';
import { AppError } from '../errors.ts';
import { requireCapability } from '../access/roles.ts';
import type { PolicyDeps } from '../policy/lists.ts';
import { invalidRule, vocabularyNow } from '../policy/rules.ts';
import { isoTime, isoTimeOrNull } from '../../domain/iso-time.ts';

const now = (deps: PolicyDeps) => (deps.clock ?? Date.now)();

export function inboxView(i: InboxRow): Inbox {
  return {
    id: i.id,
    name: i.name,
    group_by: i.group_by,
    route: i.route,
    position: i.position,
    on_block: i.on_block,
    sla_hours: i.sla_hours,
    members: i.members,
    escalation_inbox_id: i.escalation_id,
    auto_assign: i.auto_assign_cap === null ? null : { cap: i.auto_assign_cap },
    created_at: isoTime(i.created_at_ms),
    created_by: i.created_by,
  };
}

/** A case as the API answers it (its events carry the same: storage/case-events.ts). */
function caseView(c: CaseRow, at: number, decisionCount: number): Case {
  return caseAnswer(c, at, decisionCount);
}

export const invalid = (path: string, message: string, fix: string) => new AppError('validation_failed', message, fix, { fields: [{ path, message }] });

/** The organization's inboxes, in routing order. */
export async function allInboxes(deps: PolicyDeps, caller: OrganizationCaller): Promise<InboxList> {
  return { data: (await organizationData(deps.db, caller.organizationId).cases.inboxes()).map(inboxView) };
}

/** Makes an inbox (owners), last in routing order: its grouping must name a key field the
 *  organization declares, its route must check as a rule's expression does, its members must be
 *  the organization's. */
export async function createInbox(deps: PolicyDeps, caller: OrganizationCaller, body: InboxRequest): Promise<Inbox> {
  requireCapability(caller.role, 'manageInboxes');
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
  const routeLists = await checkInboxSettings(data, deps, body);
  if (body.escalation_inbox_id !== null && !(await data.inboxes.one(body.escalation_inbox_id))) throw noEscalationTarget(body.escalation_inbox_id);
  const made = await data.cases.createInbox({
    name: body.name,
    group_by: body.group_by,
    route: body.route,
    route_list_ids: routeLists ?? [],
    on_block: body.on_block,
    sla_hours: body.sla_hours,
    members: body.members,
    escalation_id: body.escalation_inbox_id,
    auto_assign_cap: body.auto_assign?.cap ?? null,
    created_at_ms: now(deps),
    created_by: caller.by,
  });
  if ('taken' in made) throw new AppError('conflict', `An inbox named ${body.name} exists already.`, 'Choose another name.');
  if ('listsGone' in made) throw routeListsGone();
  await deps.tail.reach(made.xid);
  return inboxView(made.inbox);
}

/** Checks what making or changing an inbox sets: its route must check as a rule's expression does
 *  (the organization's lists and fields as they are now), its members must be the organization's.
 *  Returns the ids of the lists the route names (undefined when no route is given). */
export async function checkInboxSettings(
  data: OrganizationData,
  deps: PolicyDeps,
  s: { route?: string | null | undefined; members?: readonly string[] | undefined },
): Promise<string[] | undefined> {
  let routeLists: string[] | undefined = s.route === null ? [] : undefined;
  if (s.route !== undefined && s.route !== null) {
    const { ids, kinds, language } = await vocabularyNow(data, now(deps));
    const r = checkExpression(s.route, language, new Set(ids.keys()), kinds);
    if (!r.checked) throw invalidRule(r.problems);
    routeLists = r.checked.lists.map((name) => ids.get(name)!);
  }
  const members = s.members ?? [];
  const known = await data.cases.membersAmong(members);
  const strangers = members.filter((m) => !known.has(m));
  if (strangers.length)
    throw new AppError(
      'not_a_member',
      `${strangers.join(', ')} ${strangers.length === 1 ? 'is not a member' : 'are not members'} of this organization.`,
      undefined,
      {
        fields: strangers.map((m) => ({ path: `body.members[${members.indexOf(m)}]`, message: `${m} is not a member of this organization` })),
      },
    );
  return routeLists;
}

/** What an inbox's save answers when a list its route names was deleted meanwhile. */
export const routeListsGone = () =>
  new AppError(
    'conflict',
    "A list the inbox's route names was deleted while the inbox was saved.",
    'Send the request again: the route is checked against the lists as they are now.',
  );

/** `validation_failed` for an escalation inbox that is not another of the organization's. */
export const noEscalationTarget = (id: string) =>
  invalid(
    'body.escalation_inbox_id',
    `${id} is not another inbox of this organization`,
    "Name another of the organization's inboxes (GET …/inboxes), or null.",
  );

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
  const data = organizationData(deps.db, caller.organizationId);
  await data.cases.wake(at);
  const page = await data.cases.list(filters, q.limit, q.starting_after);
  if (!page)
    throw new AppError(
      'not_found',
      `starting_after names no case ${q.starting_after} in this organization.`,
      'Pass the id of the last case of the previous page.',
    );
  const counts = await data.cases.decisionCounts(page.rows.map((c) => c.id));
  return { data: page.rows.map((c) => caseView(c, at, counts.get(c.id) ?? 0)), has_more: page.hasMore };
}

async function detail(deps: PolicyDeps, data: OrganizationData, id: string): Promise<CaseDetail> {
  const row = await data.cases.one(id);
  if (!row) throw new AppError('not_found', `No case ${id} in this organization.`, "Check the case's id (GET the organization's cases).");
  const at = now(deps);
  const view = caseView(row, at, 0);
  const { kind, id: entityId, field } = view.entity;
  const [ids, timeline, summary, lists] = await Promise.all([
    data.cases.decisionIds(id),
    data.cases.timeline(id),
    data.transactions.entity(kind, row.entity_key),
    data.lists.holding(entityId, kindsHolding(kind), at),
  ]);
  const records = await Promise.all(ids.map((t) => data.transactions.get(t)));
  return {
    ...view,
    decision_count: ids.length,
    decisions: records.flatMap((r) => (r ? [transactionRecord(r)] : [])),
    entity_summary: summary ? { ...entityView(kind, entityId, summary), ...(field === null ? {} : { field }) } : null,
    lists: lists.map((l) => ({
      name: l.name,
      kind: l.kind,
      added_at: isoTime(l.added_at_ms),
      reason: l.reason,
      expires_at: isoTimeOrNull(l.expires_at_ms),
    })),
    timeline: timeline.map((e) => ({ ...e, at: isoTime(e.at_ms), detail: JSON.parse(e.detail) as unknown })),
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
  return { exported_at: isoTime(now(deps)), organization_id: caller.organizationId, case: c };
}

/** What case actions need beyond reading: the decision log and the tail (outcomes recorded on
 *  closing go through the same path as marking a decision). */
export interface CaseActionDeps extends PolicyDeps {
  decisionLog: DecisionLog;
}

const noCase = (id: string) => new AppError('not_found', `No case ${id} in this organization.`, "Check the case's id (GET the organization's cases).");
const closedCase = (id: string) =>
  new AppError('case_closed', `Case ${id} is closed: only reopening it changes it.`, 'Reopen it first: POST …/status with {"status": "open"}.');

/** `case.assigned` when a change gave the case another assignee (nobody included), written in the
 *  change's transaction. */
const assignedEvent =
  (data: OrganizationData, at: number) =>
  (c: CaseRow, before: CaseRow, tx: Queryable): Promise<void> =>
    c.assignee === before.assignee ? Promise.resolve() : data.caseEvents.announce([{ type: 'case.assigned', row: c }], at, tx);

/** `case.closed` when a change closed the case (with its resolution), written in its transaction. */
const closedEvent =
  (data: OrganizationData, at: number) =>
  (c: CaseRow, before: CaseRow, tx: Queryable): Promise<void> =>
    c.status === 'closed' && before.status !== 'closed' ? data.caseEvents.announce([{ type: 'case.closed', row: c }], at, tx) : Promise.resolve();

/** Whether `userId` may work cases of the inbox (its members; anyone of the organization when it
 *  names none). */
async function mayWork(data: OrganizationData, inboxId: string, userId: string): Promise<boolean> {
  const members = (await data.cases.inboxMembers(inboxId)) ?? [];
  return members.length === 0 ? (await data.cases.membersAmong([userId])).has(userId) : members.includes(userId);
}

/**
 * Changes a case's status: `open` (also reopening a closed one), `in_progress`, `snoozed` until a
 * later time (it wakes by itself), or `closed` with a resolution. Closing as fraud or legitimate
 * records that outcome, source `review`, by the closing member, on each of its decisions without
 * one, through the same path as marking them one by one (features, drift, challengers' reports and
 * webhooks follow); `inconclusive` records none.
 */
export async function setCaseStatus(
  deps: CaseActionDeps,
  caller: OrganizationCaller,
  id: string,
  body: { status: CaseStatus; until?: string | undefined; resolution?: CaseResolution | undefined },
): Promise<CaseDetail> {
  requireCapability(caller.role, 'workCases');
  const data = organizationData(deps.db, caller.organizationId);
  const at = now(deps);
  if (body.status === 'closed' && body.resolution === undefined)
    throw invalid('body.resolution', 'closing a case needs a resolution', 'Send resolution: fraud, legitimate or inconclusive.');
  if (body.status !== 'closed' && body.resolution !== undefined) throw invalid('body.resolution', 'only closing takes a resolution', 'Leave resolution out.');
  const until = body.until === undefined ? undefined : Date.parse(body.until);
  if (body.status === 'snoozed' && (until === undefined || !(until > at)))
    throw invalid('body.until', 'snoozing needs a time in the future', 'Send until: an ISO 8601 time after now.');
  if (body.status !== 'snoozed' && until !== undefined) throw invalid('body.until', 'only snoozing takes a time', 'Leave until out.');
  let changed: Awaited<ReturnType<typeof data.cases.change>>;
  try {
    changed = await data.cases.change(
      id,
      at,
      caller.by,
      (c) => {
        if (c.status === 'closed' && body.status !== 'open') return { refuse: 'closed' };
        return {
          set: {
            status: body.status,
            resolution: body.status === 'closed' ? body.resolution! : null,
            snoozed_until_ms: body.status === 'snoozed' ? until! : null,
            closed_at_ms: body.status === 'closed' ? at : null,
          },
          entry: {
            kind: 'status',
            detail: {
              from: c.status,
              to: body.status,
              ...(until ? { until: isoTime(until) } : {}),
              ...(body.resolution ? { resolution: body.resolution } : {}),
            },
          },
        };
      },
      closedEvent(data, at),
    );
  } catch (e) {
    // Reopening while another case of the entity is open in the inbox: the open-case index says no.
    if ((e as { sqlState?: string }).sqlState === '23505')
      throw new AppError('conflict', 'Another case of this entity is open in this inbox.', 'Work that case instead (GET the cases of the inbox).');
    throw e;
  }
  if (!changed) throw noCase(id);
  if ('refused' in changed) throw closedCase(id);
  if (body.status === 'closed' && (body.resolution === 'fraud' || body.resolution === 'legitimate')) {
    const ids = await data.cases.decisionIds(id);
    const records = await Promise.all(ids.map((t) => data.transactions.get(t)));
    const open = records.flatMap((r) => (r && r.label === null ? [r.transaction_id] : []));
    const outcome = body.resolution === 'fraud' ? 'fraud' : 'legit';
    const results = await reportOutcomes(
      deps.decisionLog,
      deps.tail,
      data.outcomes,
      open.map((transaction_id) => ({ transaction_id, outcome, source: 'review' as const })),
      caller.by,
      at,
    );
    const applied = results.filter((r) => r.status === 'applied').map((r) => r.transaction_id);
    await data.cases.append(id, { at, actor: caller.by, kind: 'outcomes_recorded', detail: { outcome, transaction_ids: applied } });
  }
  return detail(deps, data, id);
}

/** Assigns a case to a member who works its inbox, or to nobody (`null`). */
export async function assignCase(deps: CaseActionDeps, caller: OrganizationCaller, id: string, userId: string | null): Promise<CaseDetail> {
  requireCapability(caller.role, 'workCases');
  const data = organizationData(deps.db, caller.organizationId);
  // A case never changes inbox, so who may work it is known before its row is locked.
  const current = await data.cases.one(id);
  if (!current) throw noCase(id);
  const allowed = userId === null || (await mayWork(data, current.inbox_id, userId));
  const at = now(deps);
  const changed = await data.cases.change(
    id,
    at,
    caller.by,
    (c) => {
      if (c.status === 'closed') return { refuse: 'closed' as const };
      if (!allowed) return { refuse: 'stranger' as const };
      // Already theirs: nothing changes, so the timeline and the endpoints hear nothing.
      if (c.assignee === userId) return { refuse: 'unchanged' as const };
      return { set: { assignee: userId }, entry: { kind: 'assigned', detail: { from: c.assignee, to: userId } } };
    },
    assignedEvent(data, at),
  );
  if (!changed) throw noCase(id);
  if ('refused' in changed && changed.refused !== 'unchanged') {
    if (changed.refused === 'closed') throw closedCase(id);
    throw new AppError('not_a_member', `${userId} does not work this case's inbox.`, "Assign a member of the inbox (GET the organization's inboxes).", {
      fields: [{ path: 'body.user_id', message: `${userId} is not a member of the inbox` }],
    });
  }
  return detail(deps, data, id);
}

/** The caller claims a case (assigns it to themselves). */
export function claimCase(deps: CaseActionDeps, caller: OrganizationCaller, id: string): Promise<CaseDetail> {
  return assignCase(deps, caller, id, caller.by);
}

/** A note on a case's timeline. */
export async function noteCase(deps: CaseActionDeps, caller: OrganizationCaller, id: string, text: string): Promise<CaseDetail> {
  requireCapability(caller.role, 'workCases');
  const data = organizationData(deps.db, caller.organizationId);
  const changed = await data.cases.change(id, now(deps), caller.by, (c) =>
    c.status === 'closed' ? { refuse: 'closed' } : { set: {}, entry: { kind: 'note', detail: { text } } },
  );
  if (!changed) throw noCase(id);
  if ('refused' in changed) throw closedCase(id);
  return detail(deps, data, id);
}

/** The caller's next case (their own first, then the unassigned ones of their inboxes, the soonest
 *  due first), claimed for them; `not_found` when there is none. Snoozed cases whose time has come
 *  are woken first. */
export async function nextCaseFor(deps: CaseActionDeps, caller: OrganizationCaller): Promise<CaseDetail> {
  requireCapability(caller.role, 'workCases');
  const data = organizationData(deps.db, caller.organizationId);
  const at = now(deps);
  await data.cases.wake(at);
  const next = await data.cases.next(caller.by, at, (c, tx) => data.caseEvents.announce([{ type: 'case.assigned', row: c }], at, tx));
  if (!next) throw new AppError('not_found', 'No case is waiting for you.', 'Come back later, or look at the cases of your inboxes.');
  return detail(deps, data, next.id);
}
