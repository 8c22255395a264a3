// Inboxes as a fraud lead manages them: an owner changes an inbox (its name, members, route,
// whether it takes blocks, its SLA, its escalation inbox, round-robin assignment, its place in
// routing order) or deletes it, and every member reads an inbox's figures. A change or deletion is
// answered once this process has applied it (the live feed carries it to every other process,
// which then routes with the new settings); it is audited as rules and fields are. Deleting an
// inbox is refused (409 `conflict`) while it has cases not closed, or while another inbox
// escalates to it: its cases are worked, closed or escalated first, never moved behind a lead's
// back. A grouping (`group_by`) is not changed: the open cases were grouped by it.

import type { Inbox, InboxAudit } from '../../contract/cases.ts';
import type { InboxChange, InboxStats } from '../../contract/inboxes.ts';
import { organizationData } from '../../storage/organization-data.ts';
import type { OrganizationCaller } from '../access/organization-caller.ts';
import { requireCapability } from '../access/roles.ts';
import { AppError } from '../errors.ts';
import type { PolicyDeps } from '../policy/lists.ts';
import { checkInboxSettings, inboxView, noEscalationTarget, routeListsGone } from './cases.ts';

const now = (deps: PolicyDeps) => (deps.clock ?? Date.now)();
const HOUR_MS = 3_600_000;

const noInbox = (id: string) => new AppError('not_found', `No inbox ${id} in this organization.`, "Check the inbox's id (GET the organization's inboxes).");

/** Changes an inbox (owners); what the body leaves out stays as it is. */
export async function changeInbox(deps: PolicyDeps, caller: OrganizationCaller, id: string, body: InboxChange): Promise<Inbox> {
  requireCapability(caller.role, 'manageInboxes');
  const data = organizationData(deps.db, caller.organizationId);
  if (Object.keys(body).length === 0) {
    // Nothing to change: nothing is written or audited.
    const inbox = await data.inboxes.one(id);
    if (!inbox) throw noInbox(id);
    return inboxView(inbox);
  }
  const routeLists = await checkInboxSettings(data, deps, body);
  const changed = await data.inboxes.change(
    id,
    {
      name: body.name,
      members: body.members,
      route: body.route,
      route_list_ids: routeLists,
      on_block: body.on_block,
      sla_hours: body.sla_hours,
      escalation_id: body.escalation_inbox_id,
      auto_assign_cap: body.auto_assign === undefined ? undefined : (body.auto_assign?.cap ?? null),
      position: body.position,
    },
    now(deps),
    caller.by,
  );
  if (!changed) throw noInbox(id);
  if (changed === 'taken') throw new AppError('conflict', `An inbox named ${body.name} exists already.`, 'Choose another name.');
  if (changed === 'no_escalation') throw noEscalationTarget(body.escalation_inbox_id!);
  if ('listsGone' in changed) throw routeListsGone();
  await deps.tail.reach(changed.xid);
  return inboxView(changed.inbox);
}

/** Deletes an inbox (owners): no decision is routed to it any more; its closed cases stay. */
export async function deleteInbox(deps: PolicyDeps, caller: OrganizationCaller, id: string): Promise<void> {
  requireCapability(caller.role, 'manageInboxes');
  const data = organizationData(deps.db, caller.organizationId);
  const gone = await data.inboxes.remove(id, now(deps), caller.by);
  if (!gone) throw noInbox(id);
  if ('openCases' in gone)
    throw new AppError(
      'conflict',
      `The inbox has ${gone.openCases} ${gone.openCases === 1 ? 'case' : 'cases'} not closed.`,
      `Close or escalate them first (GET …/cases?inbox_id=${id}), then delete the inbox.`,
      { open_cases: gone.openCases },
    );
  if ('escalatedFrom' in gone)
    throw new AppError(
      'conflict',
      `${gone.escalatedFrom.join(', ')} ${gone.escalatedFrom.length === 1 ? 'escalates' : 'escalate'} to this inbox.`,
      'Change their escalation inbox first (PATCH …/inboxes/{inbox_id} with escalation_inbox_id), then delete this one.',
      { escalated_from: gone.escalatedFrom },
    );
  await deps.tail.reach(gone.xid);
}

/** An inbox's recorded changes, oldest first (members), a deleted inbox's too: who made it and
 *  with what, each change and what it set, and who deleted it. */
export async function inboxAudit(deps: PolicyDeps, caller: OrganizationCaller, id: string): Promise<InboxAudit> {
  const data = organizationData(deps.db, caller.organizationId);
  const rows = await data.inboxes.audit(id);
  if (rows.length === 0 && !(await data.inboxes.one(id))) throw noInbox(id);
  return {
    data: rows.map((e) => ({
      at: new Date(e.at_ms).toISOString(),
      by: e.by,
      action: e.action as InboxAudit['data'][number]['action'],
      detail: e.detail as Record<string, unknown> | null,
    })),
  };
}

/** An inbox's figures now (members): its cases by status, overdue, closed in the last 7 and 30
 *  days with the median time to close, and per analyst. */
export async function inboxStats(deps: PolicyDeps, caller: OrganizationCaller, id: string): Promise<InboxStats> {
  const data = organizationData(deps.db, caller.organizationId);
  if (!(await data.inboxes.one(id))) throw noInbox(id);
  const at = now(deps);
  const { median_close_ms, ...s } = await data.inboxes.stats(id, at);
  return {
    inbox_id: id,
    at: new Date(at).toISOString(),
    ...s,
    median_time_to_close_hours: median_close_ms === null ? null : Math.round((median_close_ms / HOUR_MS) * 100) / 100,
  };
}
