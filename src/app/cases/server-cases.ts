// Cases opened on a transaction by hand: by a customer's server (`POST /api/v1/cases`, an API key)
// or by a member from the transaction's page (`POST /api/organizations/{id}/cases`): a chargeback
// dispute, a customer's complaint, anything that makes a transaction worth a person's look whatever
// its decision was. The case is the one a decision of the transaction would open or join: the inbox the
// stored decision's routing picks (else the organization's default inbox, else its first), grouped
// as that inbox groups, through the very statement decisions use (storage/cases-store.ts
// joinCases), so there is never a second open case of the entity, whichever process or surface
// opens it first. Sending the same transaction again adds nothing.

import type { Case, OpenCaseRequest } from '../../contract/cases.ts';
import { casePriority } from '../../domain/cases.ts';
import { Policy } from '../../live/policy.ts';
import { caseAnswer } from '../../storage/case-events.ts';
import { decisionValues } from '../../storage/decision-inputs.ts';
import { organizationData } from '../../storage/organization-data.ts';
import type { OrganizationCaller } from '../access/organization-caller.ts';
import { requireCapability } from '../access/roles.ts';
import { AppError } from '../errors.ts';
import type { CaseActionDeps } from './cases.ts';

const HOUR_MS = 3_600_000;

/** What the server is answered: the case, and whether this request opened it (201) or the
 *  transaction joined, or was already in, the open one (200). */
export interface OpenedCase {
  case: Case;
  opened: boolean;
}

/** Opens a case on one of the organization's transactions, or adds the transaction to its entity's
 *  open case; the timeline says who (`key:<id>`, or the member's user id) and why. */
export async function openCaseOnTransaction(deps: CaseActionDeps, caller: OrganizationCaller, body: OpenCaseRequest): Promise<OpenedCase> {
  // `openCases` is every member's (those who work cases: owners and analysts) and every API key's.
  requireCapability(caller.role, 'openCases');
  const data = organizationData(deps.db, caller.organizationId);
  // A transaction answered a moment ago may not be stored yet (write-behind).
  await deps.decisionLog.flush();
  const row = await data.transactions.get(body.transaction_id);
  if (!row)
    throw new AppError(
      'not_found',
      `No transaction ${body.transaction_id} in this organization.`,
      'Check the transaction_id: it is the one sent with (or returned by) the score request.',
    );
  const [logged, routing] = await Promise.all([row.source === 'scored' ? data.decisions.get(row.transaction_id) : undefined, data.caseEvents.routing()]);
  const policy = new Policy();
  for (const f of routing.fields) policy.setField(f);
  for (const i of routing.inboxes) policy.setInbox(i);
  const routed = policy.routeOpened(logged && decisionValues(logged), {
    customer_id: row.customer_id,
    merchant_id: row.merchant_id,
    fields: row.fields ?? undefined,
  });
  if (!routed) throw new AppError('no_inbox');
  const at = (deps.clock ?? Date.now)();
  const { row: opened, opened: isNew } = await data.caseEvents.open({
    inbox_id: routed.inbox.id,
    entity_kind: routed.kind,
    entity_key: routed.key,
    transaction_id: row.transaction_id,
    priority: casePriority(logged?.risk_score ?? 0, row.amount),
    at,
    due: at + routed.inbox.sla_hours * HOUR_MS,
    actor: caller.by,
    reason: body.reason,
  });
  const counts = await data.cases.decisionCounts([opened.id]);
  return { case: caseAnswer(opened, at, counts.get(opened.id) ?? 0), opened: isNew };
}
