// An organization's rules, as use cases for the dashboard: create, change (each change of the
// expression, action or description saves a new immutable version), activate, shadow, disable,
// delete, read with their 7-day matches and errors, and check an expression (optionally evaluated
// on what a stored transaction's decision saw). An expression is checked when it is saved against
// the fields rules read and the organization's lists; one that cannot be saved is `invalid_rule`
// with each problem's line and column, and nothing stored changes. Every read and write goes
// through the organization's OrganizationData (its rules and lists), so another organization's
// rule is not found; a write is answered once this process has applied it (the live feed carries
// it to the others). Each answers in the contract's shape (contract/rules.ts). An active rule
// decides payments, so making one and any change of one are its owners' (access/roles.ts,
// `manageActiveRules`, checked again under the rule's lock in storage); the rest is every member's
// (`workRules`): an analyst's rule runs in draft or shadow.

import { AppError } from '../errors.ts';
import type { OrganizationCaller } from '../access/organization-caller.ts';
import { may, refusal, requireCapability } from '../access/roles.ts';
import { randomId } from '../access/secrets.ts';
import type { PolicyDeps } from './lists.ts';
import type { CheckResult, Rule, RuleHistory, RuleList, RuleVersions } from '../../contract/rules.ts';
import {
  checkExpression,
  evaluateText,
  ruleLanguage,
  type CheckedExpression,
  type RuleAction,
  type RuleLanguage,
  type RuleProblem,
} from '../../domain/rules/expression.ts';
import { ruleInput, valuesRead } from '../../domain/rules/decide.ts';
import { ItemHistory, type ListKind } from '../../domain/rules/lists.ts';
import { decisionValues, loggedFeatures } from '../../storage/decision-inputs.ts';
import { organizationData } from '../../storage/organization-data.ts';
import type { OrganizationData, OrganizationRules } from '../../storage/organization-data.ts';
import type { RuleStatus } from '../../storage/rule-state.ts';
import type { RuleRow, VersionInput, VersionRow } from '../../storage/rules-store.ts';
import { isoTime } from '../../domain/iso-time.ts';

/** How far back a rule's listed matches and errors are counted. */
export const COUNT_WINDOW_MS = 7 * 86_400_000;

export interface RulesDeps extends PolicyDeps {
  /** Each channel's feature names of a model (to read a stored transaction's features by name);
   *  undefined for a model this service cannot load. */
  featureNames(modelId: string): Promise<readonly (readonly string[])[] | undefined>;
}

const now = (deps: PolicyDeps) => (deps.clock ?? Date.now)();

function ruleView(r: RuleRow): Rule {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    expression: r.expression,
    action: r.action,
    status: r.status,
    version: r.version,
    live_version: r.live_version,
    created_at: isoTime(r.created_at_ms),
    created_by: r.created_by,
    updated_at: isoTime(r.updated_at_ms),
    updated_by: r.updated_by,
    matches_7d: r.matches,
    errors_7d: r.errors,
  };
}

const noRule = (id: string) => new AppError('not_found', `No rule ${id} in this organization.`, "Check the rule id (GET the organization's rules).");
const nameTaken = (name: string) =>
  new AppError('conflict', `This organization has a rule named ${name} already.`, 'Choose another name, or save a new version of that rule.');

export function invalidRule(problems: RuleProblem[]): AppError {
  const first = problems[0]!;
  return new AppError(
    'invalid_rule',
    `The expression cannot be used: ${first.message} (line ${first.line}, column ${first.column}).`,
    'Correct the expression at the line and column given; docs/rules.md lists the fields, functions and limits.',
    { errors: problems },
  );
}

/** What an expression is checked against now: the organization's lists (name → id, and name →
 *  kind, what a list may be compared with) and the language of its declared fields. */
export interface Vocabulary {
  ids: Map<string, string>;
  kinds: Map<string, ListKind>;
  language: RuleLanguage;
}

export async function vocabularyNow(data: OrganizationData, at: number): Promise<Vocabulary> {
  const [rows, fields] = await Promise.all([data.lists.all(at), data.fields.all()]);
  return { ids: new Map(rows.map((l) => [l.name, l.id])), kinds: new Map(rows.map((l) => [l.name, l.kind])), language: ruleLanguage(fields) };
}

/** Checks an expression against the organization's lists and fields: what it uses, or `invalid_rule`. */
async function checked(deps: PolicyDeps, data: OrganizationData, expression: string): Promise<{ checked: CheckedExpression; ids: Map<string, string> }> {
  const { ids, kinds, language } = await vocabularyNow(data, now(deps));
  const r = checkExpression(expression, language, new Set(ids.keys()), kinds);
  if (!r.checked) throw invalidRule(r.problems);
  return { checked: r.checked, ids };
}

/** Why a save found a list its expression names deleted meanwhile (the check before it had seen the
 *  list): the expression checked again says where (`invalid_rule`). A list of that name made again
 *  since is another list: then the save is to be sent again. */
async function listsGone(deps: PolicyDeps, data: OrganizationData, expression: string): Promise<AppError> {
  await checked(deps, data, expression);
  return new AppError(
    'conflict',
    'A list the expression names was deleted, and another of its name made, while the rule was saved.',
    'Send the request again: it is checked against the lists as they are now.',
  );
}

async function oneRule(deps: PolicyDeps, rules: OrganizationRules, id: string): Promise<Rule> {
  const row = await rules.one(id, now(deps) - COUNT_WINDOW_MS);
  if (!row) throw noRule(id);
  return ruleView(row);
}

export async function createRule(
  deps: PolicyDeps,
  caller: OrganizationCaller,
  body: { name: string; expression: string; action: RuleAction; status: RuleStatus; description?: string | undefined },
): Promise<Rule> {
  requireCapability(caller.role, body.status === 'active' ? 'manageActiveRules' : 'workRules');
  const data = organizationData(deps.db, caller.organizationId);
  const { checked: c, ids } = await checked(deps, data, body.expression);
  if ((await data.rules.count()) >= deps.config.MAX_RULES_PER_ORG) {
    throw new AppError(
      'limit_reached',
      `The organization has ${deps.config.MAX_RULES_PER_ORG} rules, the most allowed (MAX_RULES_PER_ORG).`,
      'Delete rules that are no longer needed, or ask the operator to raise MAX_RULES_PER_ORG.',
    );
  }
  const id = randomId('rule');
  const result = await data.rules.create({
    id,
    name: body.name,
    status: body.status,
    version: { expression: body.expression, action: body.action, description: body.description ?? null, listIds: c.lists.map((n) => ids.get(n)!) },
    at: now(deps),
    by: caller.by,
  });
  if (result === 'taken') throw nameTaken(body.name);
  if ('listsGone' in result) throw await listsGone(deps, data, body.expression);
  await deps.tail.reach(result.xid);
  return oneRule(deps, data.rules, id);
}

/** A change: any of expression, action and description saves a new version (the others kept from
 *  the newest); a status or a name alone changes the rule, not its versions. */
export async function changeRule(
  deps: PolicyDeps,
  caller: OrganizationCaller,
  id: string,
  body: {
    name?: string | undefined;
    expression?: string | undefined;
    action?: RuleAction | undefined;
    description?: string | null | undefined;
    status?: RuleStatus | undefined;
  },
): Promise<Rule> {
  requireCapability(caller.role, 'workRules');
  const data = organizationData(deps.db, caller.organizationId);
  const current = await oneRule(deps, data.rules, id);
  const content = body.expression !== undefined || body.action !== undefined || body.description !== undefined;
  if (!content && body.status === undefined && body.name === undefined) return current;
  // An active rule decides payments: making one, and any change of one, is an owner's.
  if (body.status === 'active' || current.status === 'active') requireCapability(caller.role, 'manageActiveRules');
  let version: VersionInput | undefined;
  if (content) {
    const expression = body.expression ?? current.expression;
    const { checked: c, ids } = await checked(deps, data, expression);
    version = {
      expression,
      action: body.action ?? current.action,
      description: body.description === undefined ? current.description : body.description,
      listIds: c.lists.map((n) => ids.get(n)!),
    };
  }
  const refuseActive = !may(caller.role, 'manageActiveRules');
  const result = await data.rules.change(id, { version, status: body.status, name: body.name, refuseActive }, now(deps), caller.by);
  if (result === undefined) throw noRule(id);
  if (result === 'taken') throw nameTaken(body.name!);
  // Activated by an owner since it was read above.
  if (result === 'active') throw refusal(caller.role, 'manageActiveRules');
  if ('listsGone' in result) {
    if (version) throw await listsGone(deps, data, version.expression);
    const names = await data.lists.names(result.listsGone);
    const gone = result.listsGone.map((l) => names.get(l) ?? l).join(', ');
    throw invalidRule([
      {
        message: `The version this change would evaluate names the deleted list ${gone}: save a version that does not use it, then change the status.`,
        line: 1,
        column: 1,
      },
    ]);
  }
  await deps.tail.reach(result.xid);
  return oneRule(deps, data.rules, id);
}

export async function deleteRule(deps: PolicyDeps, caller: OrganizationCaller, id: string): Promise<void> {
  requireCapability(caller.role, 'workRules');
  const result = await organizationData(deps.db, caller.organizationId).rules.delete(id, now(deps), caller.by, !may(caller.role, 'manageActiveRules'));
  if (!result) throw noRule(id);
  if (result === 'active') throw refusal(caller.role, 'manageActiveRules');
  await deps.tail.reach(result.xid);
}

export async function allRules(deps: PolicyDeps, caller: OrganizationCaller): Promise<RuleList> {
  return { data: (await organizationData(deps.db, caller.organizationId).rules.all(now(deps) - COUNT_WINDOW_MS)).map(ruleView) };
}

export async function rule(deps: PolicyDeps, caller: OrganizationCaller, id: string): Promise<Rule> {
  return oneRule(deps, organizationData(deps.db, caller.organizationId).rules, id);
}

export async function ruleVersions(deps: PolicyDeps, caller: OrganizationCaller, id: string): Promise<RuleVersions> {
  const data = organizationData(deps.db, caller.organizationId);
  const rows: VersionRow[] = await data.rules.versions(id);
  if (rows.length === 0) throw noRule(id);
  const names = await data.lists.names([...new Set(rows.flatMap((r) => r.list_ids))]);
  return {
    data: rows.map((r) => ({
      version: r.version,
      expression: r.expression,
      action: r.action,
      description: r.description,
      lists: r.list_ids.map((l) => names.get(l) ?? l),
      created_at: isoTime(r.created_at_ms),
      created_by: r.created_by,
    })),
  };
}

/** Every change of a rule, oldest first: created, a new version, a status or name, deleted. */
export async function ruleHistory(deps: PolicyDeps, caller: OrganizationCaller, id: string): Promise<RuleHistory> {
  const data = organizationData(deps.db, caller.organizationId);
  await oneRule(deps, data.rules, id);
  return { data: (await data.rules.audit(id)).map((a) => ({ at: isoTime(a.at_ms), by: a.by, action: a.action, detail: a.detail })) };
}

/** Checks an expression: whether it can be saved (else each problem), the lists it uses, and, given
 *  a transaction, whether it matches what that decision saw, with the values read. */
export async function checkRule(
  deps: RulesDeps,
  caller: OrganizationCaller,
  body: { expression: string; transaction_id?: string | undefined },
): Promise<CheckResult> {
  const data = organizationData(deps.db, caller.organizationId);
  const { ids, kinds, language } = await vocabularyNow(data, now(deps));
  const r = checkExpression(body.expression, language, new Set(ids.keys()), kinds);
  if (!r.checked) return { valid: false, errors: r.problems, lists: [] };
  const result: CheckResult = { valid: true, errors: [], lists: r.checked.lists };
  if (body.transaction_id === undefined) return result;
  const row = await data.decisions.get(body.transaction_id);
  const values = row && decisionValues(row);
  if (!row || !values) {
    throw new AppError(
      'not_found',
      `No scored transaction ${body.transaction_id} in this organization.`,
      'Give the transaction_id of a transaction scored through an API key (an imported one has no decision to evaluate).',
    );
  }
  const names = row.model_id ? await deps.featureNames(row.model_id) : undefined;
  const input = ruleInput(values, () => loggedFeatures(row.features, names ?? []), language);
  const lists = new Map(r.checked.lists.map((n) => [n, ids.get(n)!]));
  // The lists as they were when the transaction was decided, as a backtest reads them.
  const history = new ItemHistory();
  if (lists.size)
    await data.lists.stays([...lists.values()], (stays) =>
      stays.forEach((s) => {
        history.add(s);
      }),
    );
  const outcome = evaluateText(body.expression, lists, input, (listId, value) => history.has(listId, value, values.time), language);
  result.evaluation = {
    transaction_id: row.transaction_id,
    matched: outcome.matched,
    error: outcome.error ?? null,
    values: valuesRead(input, r.checked.fields),
  };
  return result;
}
