// A member escalates a case to its inbox's escalation inbox, with a reason: it moves there,
// unassigned and open, due after that inbox's SLA, its timeline telling from where, why and whose
// it was. When its entity already has an open case there (one open case per inbox and entity), it
// is merged into that one rather than refused: its decisions join it and it closes, naming it; the
// answer is the case that carries the work on. No escalation inbox: 422 `no_escalation_inbox`.

import type { CaseDetail } from '../../contract/cases.ts';
import { organizationData } from '../../storage/organization-data.ts';
import type { OrganizationCaller } from '../access/organization-caller.ts';
import { requireCapability } from '../access/roles.ts';
import { AppError } from '../errors.ts';
import { caseDetail, type CaseActionDeps } from './cases.ts';

/** Escalates a case; answers the case that now carries it (itself, moved, or the one it merged into). */
export async function escalateCase(deps: CaseActionDeps, caller: OrganizationCaller, id: string, reason: string): Promise<CaseDetail> {
  requireCapability(caller.role, 'workCases');
  const data = organizationData(deps.db, caller.organizationId);
  let done: Awaited<ReturnType<typeof data.escalation.escalate>>;
  try {
    done = await data.escalation.escalate(id, (deps.clock ?? Date.now)(), caller.by, reason);
  } catch (e) {
    // A decision opened the entity's case in the escalation inbox between the look and the move.
    if ((e as { sqlState?: string }).sqlState === '23505')
      throw new AppError('conflict', 'A case of this entity was just opened in the escalation inbox.', 'Escalate again: the case is merged into it.');
    throw e;
  }
  if (!done) throw new AppError('not_found', `No case ${id} in this organization.`, "Check the case's id (GET the organization's cases).");
  if (done === 'closed')
    throw new AppError('case_closed', `Case ${id} is closed: only reopening it changes it.`, 'Reopen it first: POST …/status with {"status": "open"}.');
  if (done === 'no_escalation')
    throw new AppError(
      'no_escalation_inbox',
      "This case's inbox has no escalation inbox.",
      'Ask an owner to set one (PATCH …/inboxes/{inbox_id} with escalation_inbox_id), or assign the case to someone instead.',
    );
  return caseDetail(deps, caller, done.case.id);
}
